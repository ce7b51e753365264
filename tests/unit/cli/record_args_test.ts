import { assert, assertEquals } from "../../assert.ts";
import {
  DEFAULT_RECORD_SECONDS,
  describeStep,
  MAX_RECORD_SECONDS,
  MAX_STEPS,
  MAX_WAIT_MS,
  parseRecordArgs,
  type ParseResult,
  RECORD_USAGE,
  resolveHeadless,
} from "../../../src/cli/record_args.ts";

function refusal(r: ParseResult): { flag: string; message: string } {
  if (r.ok || r.help) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  return { flag: r.flag, message: r.message };
}

Deno.test("record args: defaults for a bare URL", () => {
  const r = parseRecordArgs(["http://127.0.0.1:8080/"]);
  assert(r.ok);
  assertEquals(r.args, { url: "http://127.0.0.1:8080/", seconds: DEFAULT_RECORD_SECONDS, steps: [] });
});

Deno.test("record args: repeatable steps keep the command line's order, both flag spellings", () => {
  const r = parseRecordArgs([
    "--click",
    "Show details",
    "https://example.com/",
    "--wait-ms=500",
    "--fill",
    "Name=Ada = Lovelace",
    "--click=Save",
    "--seconds",
    "7",
    "--out",
    "out dir",
    "--headless",
  ]);
  assert(r.ok);
  assertEquals(r.args, {
    url: "https://example.com/",
    seconds: 7,
    out: "out dir",
    headless: true,
    steps: [
      { kind: "click", text: "Show details" },
      { kind: "wait", ms: 500 },
      { kind: "fill", label: "Name", value: "Ada = Lovelace" },
      { kind: "click", text: "Save" },
    ],
  });
  assertEquals(r.args.steps.map(describeStep), [
    'click "Show details"',
    "wait 500 ms",
    'fill "Name" with "Ada = Lovelace"',
    'click "Save"',
  ]);
});

Deno.test("record args: a secret-looking field's value never reaches the step's words", () => {
  for (const label of ["Password", "API key", "PIN", "One-time passcode", "Access token"]) {
    const text = describeStep({ kind: "fill", label, value: "hunter2" });
    assert(!text.includes("hunter2"), text);
    assertEquals(text, `fill ${JSON.stringify(label)} with 7 characters (masked)`);
  }
  assertEquals(describeStep({ kind: "fill", label: "Spinner", value: "x" }), 'fill "Spinner" with "x"');
});

Deno.test("record args: an empty fill value is allowed (clears the field)", () => {
  const r = parseRecordArgs(["http://a.test/", "--fill", "Search="]);
  assert(r.ok);
  assertEquals(r.args.steps, [{ kind: "fill", label: "Search", value: "" }]);
});

Deno.test("record args: every refusal names its flag", () => {
  const cases: Array<[string[], string, RegExp]> = [
    [[], "URL", /missing/],
    [["not a url"], "URL", /absolute URL/],
    [["ftp://a.test/"], "URL", /scheme ftp:/],
    [["http://a.test/", "http://b.test/"], "URL", /one URL only/],
    [["http://a.test/", "--seconds", "0"], "--seconds", new RegExp(`between 1 and ${MAX_RECORD_SECONDS}`)],
    [["http://a.test/", "--seconds", String(MAX_RECORD_SECONDS + 1)], "--seconds", /between/],
    [["http://a.test/", "--seconds", "2.5"], "--seconds", /whole number/],
    [["http://a.test/", "--seconds", "3", "--seconds", "4"], "--seconds", /more than once/],
    [["http://a.test/", "--seconds"], "--seconds", /needs a value/],
    [["http://a.test/", "--wait-ms", "-5"], "--wait-ms", /whole number/],
    [["http://a.test/", "--wait-ms", String(MAX_WAIT_MS + 1)], "--wait-ms", /between 0 and/],
    [["http://a.test/", "--click", "  "], "--click", /visible text/],
    [["http://a.test/", "--click", "x".repeat(201)], "--click", /over 200/],
    [["http://a.test/", "--fill", "Name"], "--fill", /LABEL=VALUE/],
    [["http://a.test/", "--fill", "=Ada"], "--fill", /LABEL=VALUE/],
    [["http://a.test/", "--out", ""], "--out", /folder/],
    [["http://a.test/", "--out", "a", "--out", "b"], "--out", /more than once/],
    [["http://a.test/", "--frobnicate"], "--frobnicate", /unknown option/],
    [["http://a.test/", "--frobnicate=1"], "--frobnicate", /unknown option/],
  ];
  for (const [argv, flag, message] of cases) {
    const r = refusal(parseRecordArgs(argv));
    assertEquals(r.flag, flag, `flag for ${JSON.stringify(argv)}`);
    assert(message.test(r.message), `message for ${JSON.stringify(argv)}: ${r.message}`);
  }
});

Deno.test("record args: the step count is bounded", () => {
  const argv = ["http://a.test/"];
  for (let i = 0; i <= MAX_STEPS; i++) argv.push("--wait-ms", "1");
  const r = refusal(parseRecordArgs(argv));
  assertEquals(r.flag, "--wait-ms");
  assert(r.message.includes(String(MAX_STEPS)));
});

Deno.test("record args: --help asks for the usage, which lists every flag", () => {
  assertEquals(parseRecordArgs(["--help"]), { ok: false, help: true });
  for (const flag of ["--seconds", "--click", "--fill", "--wait-ms", "--out", "--headless"]) {
    assert(RECORD_USAGE.includes(flag), flag);
  }
});

Deno.test("record args: headless by flag, by KROMETRAIL_HEADLESS, or without a display on Linux", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assertEquals(resolveHeadless(true, env({ DISPLAY: ":0" }), "linux"), true);
  assertEquals(resolveHeadless(undefined, env({ DISPLAY: ":0", KROMETRAIL_HEADLESS: "1" }), "linux"), true);
  assertEquals(resolveHeadless(undefined, env({}), "linux"), true);
  assertEquals(resolveHeadless(undefined, env({ DISPLAY: ":0" }), "linux"), false);
  assertEquals(resolveHeadless(undefined, env({ WAYLAND_DISPLAY: "wayland-0" }), "linux"), false);
  assertEquals(resolveHeadless(undefined, env({}), "darwin"), false);
});
