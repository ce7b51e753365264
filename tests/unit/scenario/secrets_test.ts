import { assert, assertEquals } from "../../assert.ts";
import {
  durableUrl,
  durableValue,
  type ResolvedSecret,
  resolveSecrets,
  resolveUrl,
  resolveValue,
  SecretRedactor,
} from "../../../src/scenario/secrets.ts";
import { validateScenario } from "../../../src/scenario/schema.ts";
import { ToolError } from "../../../src/errors.ts";

const PW: ResolvedSecret = { id: "pw", variable: "APP_PASSWORD", value: "s3cr3t pass/word&more" };
const TOKEN: ResolvedSecret = { id: "tok", variable: "APP_TOKEN", value: "tok-123" };

Deno.test("resolveSecrets: reads each declared variable", () => {
  const env: Record<string, string> = { APP_PASSWORD: PW.value, APP_TOKEN: TOKEN.value };
  const got = resolveSecrets(
    [{ secret_id: "pw", environment_variable: "APP_PASSWORD" }, {
      secret_id: "tok",
      environment_variable: "APP_TOKEN",
    }],
    (name) => env[name],
  );
  assertEquals(got, [PW, TOKEN]);
});

Deno.test("resolveSecrets: a missing or empty variable names the id and the variable, never a value", () => {
  for (const [env, state] of [[{}, "not set"], [{ APP_TOKEN: "" }, "empty"]] as const) {
    let err: unknown;
    try {
      resolveSecrets(
        [{ secret_id: "pw", environment_variable: "APP_PASSWORD" }, {
          secret_id: "tok",
          environment_variable: "APP_TOKEN",
        }],
        (name) => name === "APP_PASSWORD" ? "hunter2" : (env as Record<string, string>)[name],
      );
    } catch (e) {
      err = e;
    }
    assert(err instanceof ToolError);
    assertEquals(err.code, "secret_unavailable");
    assertEquals(err.retry, "after_recovery");
    assert(err.message.includes("tok") && err.message.includes("APP_TOKEN") && err.message.includes(state));
    assert(err.recovery?.includes("Set APP_TOKEN in the environment") === true);
    assertEquals(err.details, { secret_id: "tok", environment_variable: "APP_TOKEN" });
    assert(!JSON.stringify(err.toJSON()).includes("hunter2"));
  }
});

Deno.test("resolveValue: literals as written, secrets from their variable", () => {
  assertEquals(resolveValue({ source: "literal", value: "Ada" }, [PW]), "Ada");
  assertEquals(resolveValue({ source: "secret", secret_id: "pw" }, [PW]), PW.value);
  assertEquals(durableValue({ source: "secret", secret_id: "pw" }), "${secret:pw}");
  let code = "";
  try {
    resolveValue({ source: "secret", secret_id: "other" }, [PW]);
  } catch (e) {
    code = e instanceof ToolError ? e.code : "";
  }
  assertEquals(code, "undeclared_secret");
});

Deno.test("resolveUrl / durableUrl: entries appended in order to the URL's own query, fragment kept", () => {
  const spec = {
    url: "http://127.0.0.1:4100/a?x=1&y=two%20words#frag",
    query: [
      { name: "token", value: { source: "secret" as const, secret_id: "pw" } },
      { name: "q r", value: { source: "literal" as const, value: "a&b=c" } },
    ],
  };
  const live = resolveUrl(spec, [PW]);
  assertEquals(
    live,
    "http://127.0.0.1:4100/a?x=1&y=two%20words&token=s3cr3t+pass%2Fword%26more&q+r=a%26b%3Dc#frag",
  );
  assertEquals(new URL(live).searchParams.get("token"), PW.value);
  assertEquals(
    durableUrl(spec),
    "http://127.0.0.1:4100/a?x=1&y=two%20words&token=${secret:pw}&q+r=a%26b%3Dc#frag",
  );
  assertEquals(resolveUrl({ url: "http://a.test/p", query: [] }, []), "http://a.test/p");
  assertEquals(
    resolveUrl(
      { url: "http://a.test/p", query: [{ name: "k", value: { source: "literal", value: "v" } }] },
      [],
    ),
    "http://a.test/p?k=v",
  );
});

Deno.test("durableUrl of a validated spec: the same URL the schema normalized, secrets as references", () => {
  const s = validateScenario({
    browser: { mode: "launch" },
    start_url: {
      url: "HTTP://127.0.0.1:4100/app",
      query: [{ name: "t", value: { source: "secret", secret_id: "tok" } }],
    },
    secrets: [{ secret_id: "tok", environment_variable: "APP_TOKEN" }],
    actions: [{ step_id: "a", action: "click", selector: "#a" }],
  });
  assertEquals(durableUrl(s.start_url), "http://127.0.0.1:4100/app?t=${secret:tok}");
  assertEquals(resolveUrl(s.start_url, [TOKEN]), "http://127.0.0.1:4100/app?t=tok-123");
});

Deno.test("SecretRedactor.text: plain, URL-encoded, form-encoded and JSON-escaped forms", () => {
  const r = new SecretRedactor([PW]);
  const rows: [string, string][] = [
    [`password is ${PW.value}.`, "password is ${secret:pw}."],
    [`?p=${encodeURIComponent(PW.value)}`, "?p=${secret:pw}"],
    [`?p=${new URLSearchParams([["", PW.value]]).toString().slice(1)}`, "?p=${secret:pw}"],
    [`twice ${PW.value}${PW.value}`, "twice ${secret:pw}${secret:pw}"],
    ["nothing here", "nothing here"],
  ];
  for (const [input, expected] of rows) assertEquals(r.text(input), expected, input);
  const quoted = new SecretRedactor([{ id: "q", variable: "Q", value: 'a"b\\c/é' }]);
  assertEquals(quoted.text(JSON.stringify({ v: 'a"b\\c/é' })), '{"v":"${secret:q}"}');
  assertEquals(quoted.text('{"v":"a\\"b\\\\c\\/\\u00e9"}'), '{"v":"${secret:q}"}');
});

Deno.test("SecretRedactor: overlapping secrets, longest first", () => {
  const r = new SecretRedactor([{ id: "short", variable: "S", value: "abc" }, {
    id: "long",
    variable: "L",
    value: "xabcx",
  }]);
  assertEquals(r.text("xabcx and abc"), "${secret:long} and ${secret:short}");
  const prefix = new SecretRedactor([{ id: "a", variable: "A", value: "pass" }, {
    id: "b",
    variable: "B",
    value: "password",
  }]);
  assertEquals(prefix.text("password pass"), "${secret:b} ${secret:a}");
});

Deno.test("SecretRedactor: short values are still redacted (and over-redact, as documented)", () => {
  const r = new SecretRedactor([{ id: "pin", variable: "PIN", value: "42" }]);
  assertEquals(r.text("pin 42, page 420"), "pin ${secret:pin}, page ${secret:pin}0");
});

Deno.test("SecretRedactor.json keeps the document valid JSON", () => {
  const r = new SecretRedactor([{ id: "q", variable: "Q", value: 'he said "hi"' }]);
  const doc = JSON.stringify({
    said: 'he said "hi"',
    url: `http://a.test/?m=${encodeURIComponent('he said "hi"')}`,
  });
  const out = r.json(doc);
  assertEquals(JSON.parse(out), { said: "${secret:q}", url: "http://a.test/?m=${secret:q}" });
  assertEquals(r.json('{"k":"plain"}'), '{"k":"plain"}');
});

Deno.test("SecretRedactor.deep: every string and key of nested objects and arrays", () => {
  const r = new SecretRedactor([PW, TOKEN]);
  const input = {
    a: [`x ${PW.value}`, { b: TOKEN.value, n: 3, ok: true, nil: null }],
    [TOKEN.value]: "key was a secret",
    nested: { deeper: [[`Bearer ${TOKEN.value}`]] },
  };
  assertEquals(r.deep(input), {
    a: ["x ${secret:pw}", { b: "${secret:tok}", n: 3, ok: true, nil: null }],
    "${secret:tok}": "key was a secret",
    nested: { deeper: [["Bearer ${secret:tok}"]] },
  });
  assertEquals(input.a[0], `x ${PW.value}`, "the input is not modified");
  const bytes = new Uint8Array([1, 2]);
  assertEquals(r.deep({ bytes }).bytes === bytes, true);
});

Deno.test("SecretRedactor.has / isSecret", () => {
  const r = new SecretRedactor([PW, TOKEN]);
  assert(r.has(`a ${TOKEN.value} b`));
  assert(r.has(encodeURIComponent(PW.value)));
  assert(!r.has("tok-12"));
  assert(r.has(`again ${TOKEN.value}`), "has is repeatable (no sticky lastIndex)");
  assertEquals(r.isSecret(TOKEN.value), "tok");
  assertEquals(r.isSecret(encodeURIComponent(PW.value)), "pw");
  assertEquals(r.isSecret(`${TOKEN.value} `), undefined);
  const none = new SecretRedactor([]);
  assertEquals(none.text("anything"), "anything");
  assert(!none.has("anything"));
});

Deno.test("SecretRedactor: redacting twice changes nothing, even for a secret that is part of a reference", () => {
  const r = new SecretRedactor([{ id: "s", variable: "S", value: "secret" }, TOKEN]);
  const once = r.text(`a secret and ${TOKEN.value}`);
  assertEquals(once, "a ${secret:s} and ${secret:tok}");
  assertEquals(r.text(once), once);
  assertEquals(r.deep({ v: once }), { v: once });
  assert(!r.has("${secret:tok}"), "a reference is not a secret value");
});
