import { assertEquals } from "../../assert.ts";
import { sanitizeUrl } from "../../../src/browser/privacy.ts";
import { storedUrl } from "../../../src/browser/url_redaction.ts";

Deno.test("storedUrl: the stored form is sanitizeUrl's, and it names what that form lost", () => {
  const cases: Array<[string, string[]]> = [
    ["http://alice:pw@127.0.0.1:8000/app/page.html?token=t1&user=bob#access_token=f1", [
      "userinfo",
      "path",
      "query",
      "fragment",
    ]],
    ["https://example.com/", []],
    ["https://example.com", []],
    ["https://example.com/?debug", []],
    ["https://example.com/?debug=", []],
    ["https://example.com/?code=abc", ["query"]],
    ["https://example.com/#top", ["fragment"]],
    ["https://u@example.com/", ["userinfo"]],
    ["about:blank", []],
    ["data:text/html,<b>secret</b>", ["opaque"]],
    ["javascript:alert(1)", ["opaque"]],
    ["file:///home/u/notes.txt", ["path"]],
    ["not a url", ["invalid"]],
  ];
  for (const [url, redacted] of cases) {
    const stored = storedUrl(url);
    assertEquals(stored.redacted, redacted, url);
    assertEquals(stored.url, sanitizeUrl(url).redacted, url);
  }
  const secretFree = storedUrl("http://alice:pw9@h.test/p?token=t1#access_token=f1").url;
  for (const s of ["alice", "pw9", "t1", "f1", "/p"]) assertEquals(secretFree.includes(s), false, s);
});
