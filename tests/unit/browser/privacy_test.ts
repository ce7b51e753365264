import { assert, assertEquals, assertMatch } from "../../assert.ts";
import {
  DEFAULT_TEXT_LIMIT_BYTES,
  sanitizeConsoleArgs,
  sanitizeStackFunction,
  sanitizeText,
  sanitizeUrl,
} from "../../../src/browser/privacy.ts";

/**
 * The corpus is the contract: when a missed redaction is observed, add its shape here first.
 * `secrets` lists substrings that must never survive, at any limit.
 */
interface Case {
  label: string;
  input: string;
  expected: string;
  limit?: number;
  secrets?: string[];
}

const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const B64_KEY = "Zx8kP2qL9vR4tN7mW1bC6yH3jF5gD0sA/uE8iO2w";
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9\nx0Fz3kQ==\n-----END RSA PRIVATE KEY-----";

const CASES: Case[] = [
  // URLs: http(s)/ws(s) keep only the origin; everything else is anonymous.
  {
    label: "https url keeps origin only",
    input: "fetch https://user:pw@api.example.com:8443/v1/users?token=abc#frag failed",
    expected: "fetch <url:https://api.example.com:8443> failed",
    secrets: ["user:pw", "/v1/users", "token=abc", "frag"],
  },
  {
    label: "default port dropped",
    input: "GET http://example.com:80/a/b",
    expected: "GET <url:http://example.com>",
  },
  {
    label: "ws localhost",
    input: "socket ws://localhost:3000/socket?sid=9",
    expected: "socket <url:ws://localhost:3000>",
  },
  { label: "wss", input: "wss://rt.example.org/feed", expected: "<url:wss://rt.example.org>" },
  {
    label: "uppercase scheme and host normalised",
    input: "HTTPS://API.Example.COM/X",
    expected: "<url:https://api.example.com>",
  },
  { label: "ipv6 host", input: "http://[::1]:9222/json/version", expected: "<url:http://[::1]:9222>" },
  { label: "idn host as punycode", input: "https://例え.jp/パス", expected: "<url:https://xn--r8jz45g.jp>" },
  {
    label: "trailing sentence punctuation stays outside",
    input: "See (https://docs.example.com/a/b).",
    expected: "See (<url:https://docs.example.com>).",
  },
  {
    label: "stack location keeps line and column",
    input: "    at render (https://app.example.com/static/main.js:10:5)",
    expected: "    at render (<url:https://app.example.com>:10:5)",
  },
  { label: "file url", input: "loaded file:///home/alice/index.html", expected: "loaded <url>" },
  {
    label: "data url",
    input: "img data:image/png;base64,iVBORw0KGgoAAAANSUhEUg== end",
    expected: "img <data-url> end",
  },
  {
    label: "blob url",
    input: "blob:https://app.example.com/550e8400-e29b-41d4-a716-446655440000",
    expected: "<url>",
  },
  {
    label: "chrome-extension url",
    input: "chrome-extension://abcdefghijklmnop/popup.html",
    expected: "<url>",
  },
  {
    label: "database url with credentials",
    input: "connect postgres://admin:s3cret@db.internal:5432/app",
    expected: "connect <url>",
    secrets: ["s3cret", "admin"],
  },
  {
    label: "bare www host with path",
    input: "visit www.example.com/reset?token=abc now",
    expected: "visit <url> now",
    secrets: ["token=abc"],
  },

  // Secrets by key name: key kept, value replaced.
  {
    label: "password=",
    input: "login password=hunter2 ok",
    expected: "login password=<redacted> ok",
    secrets: ["hunter2"],
  },
  {
    label: "passwd: quoted with spaces",
    input: 'passwd: "correct horse battery"',
    expected: 'passwd: "<redacted>"',
    secrets: ["horse"],
  },
  {
    label: "json token",
    input: '{"token": "abc123", "user": "bob"}',
    expected: '{"token": "<redacted>", "user": "bob"}',
    secrets: ["abc123"],
  },
  { label: "api_key", input: "api_key=k_live_123", expected: "api_key=<redacted>", secrets: ["k_live_123"] },
  {
    label: "APIKEY uppercase",
    input: "APIKEY: foo-bar",
    expected: "APIKEY: <redacted>",
    secrets: ["foo-bar"],
  },
  { label: "secret", input: "secret = 'shh'", expected: "secret = '<redacted>'", secrets: ["shh"] },
  {
    label: "client_secret",
    input: "client_secret=cs_9f8e",
    expected: "client_secret=<redacted>",
    secrets: ["cs_9f8e"],
  },
  {
    label: "access_token in a form body",
    input: "grant=x&access_token=ya29.a0Af&y=2",
    expected: "grant=x&access_token=<redacted>&y=2",
    secrets: ["ya29"],
  },
  {
    label: "refresh_token",
    input: "refresh_token: 1//0gLx",
    expected: "refresh_token: <redacted>",
    secrets: ["0gLx"],
  },
  {
    label: "authorization bearer header",
    input: "Authorization: Bearer abc.def.ghi",
    expected: "Authorization: Bearer <redacted>",
    secrets: ["abc.def.ghi"],
  },
  {
    label: "authorization basic header",
    input: "authorization: Basic dXNlcjpwYXNz",
    expected: "authorization: Basic <redacted>",
    secrets: ["dXNlcjpwYXNz"],
  },
  { label: "auth", input: "auth=xyz789", expected: "auth=<redacted>", secrets: ["xyz789"] },
  { label: "session", input: "session=s%3Aabc", expected: "session=<redacted>", secrets: ["s%3Aabc"] },
  { label: "sessionid", input: "sessionid: 7f7e7d", expected: "sessionid: <redacted>", secrets: ["7f7e7d"] },
  {
    label: "cookie header runs to end of line only",
    input: "Cookie: sid=abc; theme=dark\nnext line",
    expected: "Cookie: <redacted>\nnext line",
    secrets: ["sid=abc", "theme=dark"],
  },
  {
    label: "set-cookie header",
    input: "Set-Cookie: id=a3fWa; Expires=Wed, 21 Oct 2025",
    expected: "Set-Cookie: <redacted>",
    secrets: ["a3fWa"],
  },
  { label: "jwt key", input: "jwt: notreallyajwt", expected: "jwt: <redacted>", secrets: ["notreallyajwt"] },
  {
    label: "private_key",
    input: "private_key='pk_abcdef'",
    expected: "private_key='<redacted>'",
    secrets: ["pk_abcdef"],
  },
  { label: "x-api-key", input: "x-api-key: 12345", expected: "x-api-key: <redacted>", secrets: ["12345"] },
  {
    label: "camelCase key in a JS object",
    input: "{authToken: 'tok_1', userName: 'bob'}",
    expected: "{authToken: '<redacted>', userName: 'bob'}",
    secrets: ["tok_1"],
  },
  {
    label: "env var",
    input: "DB_PASSWORD=pa55w0rd",
    expected: "DB_PASSWORD=<redacted>",
    secrets: ["pa55w0rd"],
  },
  {
    label: "cli flag",
    input: "run --password hunter2 --verbose",
    expected: "run --password <redacted> --verbose",
  },
  {
    label: "escaped json",
    input: '{\\"password\\":\\"p@ss\\"}',
    expected: '{\\"password\\":\\"<redacted>\\"}',
    secrets: ["p@ss"],
  },
  {
    label: "unclosed quote hides to end of line",
    input: 'password: "abc def\nnext',
    expected: 'password: "<redacted>\nnext',
    secrets: ["abc def"],
  },

  // Standalone secret shapes.
  {
    label: "bearer token in prose",
    input: "sent Bearer mF_9.B5f-4.1JqM to api",
    expected: "sent Bearer <redacted> to api",
    secrets: ["mF_9.B5f-4.1JqM"],
  },
  {
    label: "jwt",
    input: `got ${JWT} back`,
    expected: "got <redacted> back",
    secrets: ["SflKxwRJ", "eyJzdWIi"],
  },
  { label: "aws access key id", input: "key AKIAIOSFODNN7EXAMPLE used", expected: "key <redacted> used" },
  {
    label: "40-hex digest",
    input: "sig 9fceb02d0ae598e95dc970b74767f19372d61af8",
    expected: "sig <redacted>",
    secrets: ["9fceb02d"],
  },
  { label: "random base64 key", input: `k=${B64_KEY};`, expected: "k=<redacted>;", secrets: [B64_KEY] },
  {
    label: "github token",
    input: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    expected: "<redacted>",
    secrets: ["abcdefghijklmnop"],
  },
  {
    label: "github fine-grained token",
    input: "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    expected: "<redacted>",
  },
  { label: "slack token", input: "xoxb-1234567890-abcdefghij", expected: "<redacted>" },
  {
    label: "pem block",
    input: `key:\n${PEM}\nafter`,
    expected: "key:\n<redacted>\nafter",
    secrets: ["MIIEow"],
  },
  {
    label: "pem block without END",
    input: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0B",
    expected: "<redacted>",
    secrets: ["MIIEvQ", "kqhkiG9w0B"],
  },
  { label: "card with spaces", input: "card 4111 1111 1111 1111 ok", expected: "card <redacted> ok" },
  { label: "card with dashes", input: "5500-0000-0000-0004", expected: "<redacted>" },
  { label: "card plain", input: "cc=4242424242424242", expected: "cc=<redacted>" },
  { label: "amex grouping", input: "3782 822463 10005", expected: "<redacted>" },

  // Emails.
  { label: "email", input: "mail bob@example.com now", expected: "mail <email> now", secrets: ["bob"] },
  { label: "email with plus and subdomain", input: "<a.b+tag@mail.co.uk>", expected: "<<email>>" },

  // Paths.
  {
    label: "linux home path",
    input: "read /home/alice/notes.txt",
    expected: "read <path>",
    secrets: ["alice"],
  },
  { label: "mac users path", input: "open /Users/bob/Library/x", expected: "open <path>", secrets: ["bob"] },
  { label: "tmp path", input: "/tmp/upload-123/file.bin", expected: "<path>" },
  { label: "var path", input: "log at /var/log/app.log", expected: "log at <path>" },
  { label: "etc path before a period", input: "edit /etc/hosts.", expected: "edit <path>." },
  {
    label: "stack frame path keeps line and column",
    input: "at main (/srv/app/src/index.ts:12:5)",
    expected: "at main (<path>:12:5)",
  },
  {
    label: "windows path",
    input: "C:\\Users\\bob\\AppData\\x.log missing",
    expected: "<path> missing",
    secrets: ["bob"],
  },
  { label: "windows forward slashes", input: "C:/Users/bob/x", expected: "<path>" },
  { label: "json-escaped windows path", input: '"C:\\\\Users\\\\bob"', expected: '"<path>"' },
  { label: "unc path", input: "\\\\fileserver\\share\\doc.txt", expected: "<path>" },
  { label: "home tilde", input: "cat ~/.ssh/id_rsa", expected: "cat <path>" },
  {
    label: "unicode path",
    input: "ファイル /home/ユーザー/書類",
    expected: "ファイル <path>",
    secrets: ["ユーザー"],
  },

  // Control characters.
  {
    label: "controls stripped, newline and tab kept",
    input: "a\u0000b\u001b[31mc\r\n\td",
    expected: "ab[31mc\n\td",
  },
  { label: "bidi override stripped", input: "abc\u202Edef\u2066", expected: "abcdef" },

  // Must not be redacted.
  {
    label: "prose",
    input: "The quick brown fox jumps over the lazy dog.",
    expected: "The quick brown fox jumps over the lazy dog.",
  },
  {
    label: "version number",
    input: "upgraded to 1.2.3 (was 1.10.0)",
    expected: "upgraded to 1.2.3 (was 1.10.0)",
  },
  {
    label: "time of day",
    input: "meeting at 12:30, ends 13:45:10",
    expected: "meeting at 12:30, ends 13:45:10",
  },
  {
    label: "small numbers",
    input: "items 1 2 3 4 5, total 42, -7, 3.14",
    expected: "items 1 2 3 4 5, total 42, -7, 3.14",
  },
  { label: "key word without value", input: "the key is missing", expected: "the key is missing" },
  {
    label: "token word without value",
    input: "invalid token in request",
    expected: "invalid token in request",
  },
  { label: "relative path", input: "error in src/app.ts line 3", expected: "error in src/app.ts line 3" },
  { label: "css", input: "width: 100px; color: #fff", expected: "width: 100px; color: #fff" },
  { label: "ms timestamp", input: "ts=1718000000000", expected: "ts=1718000000000" },
  {
    label: "uuid",
    input: "id 550e8400-e29b-41d4-a716-446655440000",
    expected: "id 550e8400-e29b-41d4-a716-446655440000",
  },
  {
    label: "long camelCase identifier",
    input: "ThisIsAVeryLongComponentName2Display failed",
    expected: "ThisIsAVeryLongComponentName2Display failed",
  },
  {
    label: "token count is metadata",
    input: "max_tokens: 512, token_count=5",
    expected: "max_tokens: 512, token_count=5",
  },
  { label: "null password is worth seeing", input: "password: null", expected: "password: null" },
  { label: "short bearer word", input: "Bearer token missing", expected: "Bearer token missing" },
  { label: "author is not auth", input: "author: Jane", expected: "author: Jane" },
  { label: "single-segment path", input: "GET /api returned 404", expected: "GET /api returned 404" },
  { label: "fractions and and/or", input: "1/2 and/or 3/4", expected: "1/2 and/or 3/4" },
  { label: "short git sha", input: "commit 9fceb02", expected: "commit 9fceb02" },
  { label: "host without path", input: "www.example.com is up", expected: "www.example.com is up" },
  { label: "unicode prose", input: "Grüße, 世界! Ça va? 🎉👨‍👩‍👧", expected: "Grüße, 世界! Ça va? 🎉👨‍👩‍👧" },

  // Truncation: UTF-8 bytes, code point boundaries, `…` inside the limit.
  { label: "ascii exactly at limit", input: "0123456789", limit: 10, expected: "0123456789" },
  { label: "ascii one over", input: "0123456789A", limit: 10, expected: "0123456…" },
  { label: "2-byte exactly at limit", input: "ééééé", limit: 10, expected: "ééééé" },
  { label: "2-byte one under", input: "ééééé", limit: 9, expected: "ééé…" },
  { label: "2-byte no half char", input: "ééééé", limit: 8, expected: "éé…" },
  { label: "3-byte cjk", input: "日本語テキスト", limit: 12, expected: "日本語…" },
  { label: "4-byte emoji not split", input: "🎉🎉🎉", limit: 11, expected: "🎉🎉…" },
  { label: "placeholder not split", input: "see /home/u/x and more", limit: 10, expected: "see …" },
  { label: "limit below ellipsis", input: "abc", limit: 2, expected: "ab" },
  { label: "zero limit", input: "abc", limit: 0, expected: "" },
  // Issue 11 misses: a value after a credential noun with no `:` or `=` between.
  {
    label: "password is X",
    input: "Your password is hunter2, keep it safe",
    expected: "Your password is <redacted>, keep it safe",
    secrets: ["hunter2"],
  },
  {
    label: "password is: X",
    input: "password is: rosebud",
    expected: "password is: <redacted>",
    secrets: ["rosebud"],
  },
  {
    label: "password was X (plain word)",
    input: "the password was rosebud",
    expected: "the password was <redacted>",
  },
  {
    label: "pw X",
    input: "login pw s3cr3t-99 ok",
    expected: "login pw <redacted> ok",
    secrets: ["s3cr3t-99"],
  },
  { label: "pw=X", input: "pw=letmein", expected: "pw=<redacted>", secrets: ["letmein"] },
  {
    label: "console key and value as arguments, joined",
    input: "token abc123xyz",
    expected: "token <redacted>",
    secrets: ["abc123xyz"],
  },
  { label: "api key spoken", input: "apiKey Zq8-77", expected: "apiKey <redacted>", secrets: ["Zq8-77"] },
  {
    label: "quoted value after a spoken key",
    input: "password 'opensesame'",
    expected: "password '<redacted>'",
  },
  // Prose about credentials stays readable.
  { label: "password is required", input: "password is required", expected: "password is required" },
  { label: "token expired", input: "Token expired, refreshing", expected: "Token expired, refreshing" },
  { label: "password field", input: "focus the password field", expected: "focus the password field" },
  { label: "session number", input: "session 42 started", expected: "session 42 started" },
  { label: "pw word", input: "pw reset link sent", expected: "pw reset link sent" },
];

function bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

Deno.test("corpus: each shape maps to its expected output", () => {
  assert(CASES.length >= 60, `corpus has ${CASES.length} cases`);
  for (const c of CASES) {
    assertEquals(sanitizeText(c.input, c.limit).text, c.expected, c.label);
  }
});

Deno.test("redactions and truncated report what happened", () => {
  assertEquals(sanitizeText("a password=x b@example.com /tmp/a/b"), {
    text: "a password=<redacted> <email> <path>",
    redactions: 3,
    truncated: false,
  });
  assertEquals(sanitizeText("plain"), { text: "plain", redactions: 0, truncated: false });
  assertEquals(sanitizeText("0123456789A", 10).truncated, true);
});

const LIMITS = [0, 1, 2, 3, 4, 7, 16, 33, 64, DEFAULT_TEXT_LIMIT_BYTES];

Deno.test("output never exceeds the byte limit", () => {
  for (const c of CASES) {
    for (const limit of LIMITS) {
      const out = sanitizeText(c.input.repeat(3), limit).text;
      assert(bytes(out) <= limit, `${c.label} @${limit}: ${bytes(out)} bytes`);
    }
  }
});

Deno.test("secret substrings never survive, at any limit", () => {
  for (const c of CASES) {
    for (const limit of LIMITS) {
      const out = sanitizeText(c.input, limit).text;
      for (const secret of c.secrets ?? []) {
        assert(!out.includes(secret), `${c.label} @${limit} leaked ${JSON.stringify(secret)}: ${out}`);
      }
    }
  }
});

/** mulberry32: a seeded PRNG so the mixed inputs are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("idempotent: sanitizing sanitized text changes nothing", () => {
  const check = (input: string, limit: number, label: string) => {
    const once = sanitizeText(input, limit);
    const twice = sanitizeText(once.text, limit);
    assertEquals(twice, { text: once.text, redactions: 0, truncated: false }, label);
  };
  for (const c of CASES) {
    for (const limit of LIMITS) check(c.input, limit, `${c.label} @${limit}`);
  }
  // Adjacent shapes change each other's context; glue corpus inputs together without spaces.
  const rnd = prng(42);
  const pick = () => CASES[Math.floor(rnd() * CASES.length)].input;
  for (let i = 0; i < 500; i++) {
    const input = Array.from({ length: 1 + Math.floor(rnd() * 4) }, pick).join(
      ["", " ", "-", "/", "="][i % 5],
    );
    check(input, LIMITS[i % LIMITS.length], `mixed #${i}: ${JSON.stringify(input)}`);
  }
});

Deno.test("adversarial 1 MB inputs finish and stay bounded", () => {
  const MB = 1 << 20;
  const units = [
    "a:",
    "/a",
    "a@",
    "eyJa.",
    "http://",
    "\\\\",
    "1 ",
    "data:a/b;",
    'password="',
    "-----BEGIN PRIVATE KEY-----",
    "Aa1+",
    "<url:https://a",
    "C:\\",
    "x=y&",
    "🎉",
  ];
  for (const unit of units) {
    const input = unit.repeat(Math.ceil(MB / unit.length));
    // The default limit stops scanning early; a large one makes every rule see the whole megabyte.
    for (const limit of [DEFAULT_TEXT_LIMIT_BYTES, 4 * MB]) {
      const out = sanitizeText(input, limit);
      assert(bytes(out.text) <= limit, `${JSON.stringify(unit)} @${limit}`);
    }
  }
});

Deno.test("oversized input is cut before scanning and marked truncated", () => {
  const input = `password=hunter2 ${"word ".repeat(100_000)}token=tail`;
  const out = sanitizeText(input, 64);
  assertEquals(out.truncated, true);
  assertMatch(out.text, /^password=<redacted> word word .*…$/);
  // The tail of a capped input is never shown, even if redactions shrink what precedes it a lot.
  const shrunk = sanitizeText(`${"/a/b ".repeat(20_000)}ghp_abcdefghijklmnopqrstuvwxyz0123`, 100_000);
  assertEquals(shrunk.truncated, true);
  assert(!shrunk.text.includes("ghp_"), "capped tail leaked");
  assert(shrunk.text.endsWith("…"), "capped output ends with an ellipsis");
});

Deno.test("never throws on hostile input", () => {
  const lone = sanitizeText("a\uD800b\uDFFFc", 64);
  assertEquals(lone.text, "a\uFFFDb\uFFFDc");
  assertEquals(sanitizeText("abc", Number.NaN).text, "abc");
  assertEquals(sanitizeText("abc", -5).text, "");
  assertEquals(sanitizeText(12345 as unknown as string).text, "12345");
  assertEquals(sanitizeText("").text, "");
});

Deno.test("stack function names: same rules, one line, 120 bytes", () => {
  assertEquals(sanitizeStackFunction("Object.<anonymous>"), "Object.<anonymous>");
  assertEquals(sanitizeStackFunction("async handler"), "async handler");
  assertEquals(sanitizeStackFunction("load /home/alice/x.js"), "load <path>");
  assertEquals(sanitizeStackFunction("token=abc"), "token=<redacted>");
  assertEquals(sanitizeStackFunction("a\nb\tc"), "a b c");
  const long = sanitizeStackFunction("f".repeat(500));
  assert(bytes(long) <= 120, "bounded");
  assert(long.endsWith("…"), "marked as cut");
  assertEquals(sanitizeStackFunction(""), "");
});

Deno.test("sanitizeUrl: origin kept, path hashed, query values and fragment dropped", () => {
  const cases: Array<[string, { origin: string; path_hash?: string; redacted: string }]> = [
    [
      "https://user:pw@api.example.com:8443/v1/users?id=7&token=abc#top",
      {
        origin: "https://api.example.com:8443",
        path_hash: "bc4b5314",
        redacted: "https://api.example.com:8443/~bc4b5314?id=&token=",
      },
    ],
    ["https://example.com:443/v1/users", {
      origin: "https://example.com",
      path_hash: "bc4b5314",
      redacted: "https://example.com/~bc4b5314",
    }],
    ["https://example.com/v1/users/", {
      origin: "https://example.com",
      path_hash: "a59405e1",
      redacted: "https://example.com/~a59405e1",
    }],
    ["https://example.com", { origin: "https://example.com", redacted: "https://example.com/" }],
    ["https://example.com/?a=1&flag&&b=2", {
      origin: "https://example.com",
      redacted: "https://example.com/?a=&flag&b=",
    }],
    [`https://x.test/cb?${"Zx8kP2qL9vR4tN7mW1bC6yH3jF5gD0sA"}`, {
      origin: "https://x.test",
      path_hash: "d9b7adff",
      redacted: "https://x.test/~d9b7adff?<redacted>",
    }],
    ["http://[::1]:9222/json", {
      origin: "http://[::1]:9222",
      path_hash: "1164f928",
      redacted: "http://[::1]:9222/~1164f928",
    }],
    ["wss://rt.example.org/a", {
      origin: "wss://rt.example.org",
      path_hash: "70d2182d",
      redacted: "wss://rt.example.org/~70d2182d",
    }],
    ["file:///home/u/x", { origin: "file://", path_hash: "1962edca", redacted: "file:///~1962edca" }],
    ["data:text/plain;base64,SGVsbG8=", { origin: "", redacted: "data:<redacted>" }],
    ["blob:https://a.test/550e8400-e29b-41d4-a716-446655440000", {
      origin: "https://a.test",
      redacted: "blob:<redacted>",
    }],
    ["about:blank", { origin: "", redacted: "about:blank" }],
    ["about:config?x", { origin: "", redacted: "about:<redacted>" }],
    ["javascript:alert(document.cookie)", { origin: "", redacted: "javascript:<redacted>" }],
    ["mailto:bob@example.com", { origin: "", redacted: "mailto:<redacted>" }],
    ["/relative/path", { origin: "", redacted: "<invalid-url>" }],
    ["http://", { origin: "", redacted: "<invalid-url>" }],
    ["", { origin: "", redacted: "<invalid-url>" }],
  ];
  for (const [input, expected] of cases) assertEquals(sanitizeUrl(input), expected, input);
  // Same path, same hash, whatever the query; different path, different hash.
  assertEquals(sanitizeUrl("https://a.test/p?x=1").path_hash, sanitizeUrl("https://b.test/p?y=2").path_hash);
  assert(
    sanitizeUrl("https://a.test/p").path_hash !== sanitizeUrl("https://a.test/q").path_hash,
    "paths differ",
  );
});

Deno.test("console arguments: a key argument hides the whole next argument, whatever it looks like", () => {
  const cases: Array<[string[], string]> = [
    [["token", "sunflowermeadow"], "token <redacted>"],
    [["login", "password:", "plainword"], "login password: <redacted>"],
    [["my api_key =", "k1"], "my api_key = <redacted>"],
    [["password is", "rosebud"], "password is <redacted>"],
    [["secret", "42"], "secret <redacted>"],
    // Benign values and non-secret keys stay.
    [["token", "null"], "token null"],
    [["user", "bob"], "user bob"],
    [["token count", "3"], "token count 3"],
    [["saved", { toString: () => "x" }.toString()], "saved x"],
  ];
  for (const [args, expected] of cases) {
    assertEquals(sanitizeConsoleArgs(args).text, expected, args.join(" | "));
  }
  assertEquals(sanitizeConsoleArgs(["token", "sunflowermeadow"]).redactions, 1);
});
