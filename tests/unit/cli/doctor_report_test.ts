import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { type CheckResult, renderJson, renderText, summarize } from "../../../src/cli/doctor_report.ts";
import { mcpSnippet } from "../../../src/cli/mcp_snippet.ts";

const mcp = mcpSnippet({ kind: "npm" });
const meta = { krometrail: "0.1.0", platform: "linux x86_64, deno 2.9.6", elapsed_ms: 1234.4 };

const ok = (section: CheckResult["section"], name: string, needed = true): CheckResult => ({
  section,
  name,
  status: "ok",
  detail: `${name} is fine`,
  needed,
});

Deno.test("everything needed ok (warnings aside) is ready, exit 0, no fix", () => {
  const report = summarize(
    [
      ok("browser", "platform default"),
      ok("launch", "launch + frame"),
      {
        section: "video",
        name: "ffmpeg",
        status: "warn",
        detail: "not on PATH",
        needed: false,
        fix: "install it",
      },
      ok("data", "data dir"),
    ],
    mcp,
    meta,
  );
  assertEquals(report.ready, true);
  assertEquals(report.exit_code, 0);
  assertEquals(report.fix, undefined);
  assertEquals(report.elapsed_ms, 1234);
});

Deno.test("the fix is the first needed failure in section order, not in the order checks finished", () => {
  const report = summarize(
    [
      {
        section: "data",
        name: "data dir",
        status: "fail",
        detail: "not writable",
        needed: true,
        fix: "fix the data dir",
      },
      {
        section: "video",
        name: "ffmpeg",
        status: "fail",
        detail: "broken",
        needed: false,
        fix: "only video",
      },
      {
        section: "browser",
        name: "KROMETRAIL_CHROME",
        status: "fail",
        detail: "/nope does not exist",
        needed: true,
        fix: "KROMETRAIL_CHROME points at /nope",
      },
    ],
    mcp,
    meta,
  );
  assertEquals(report.ready, false);
  assertEquals(report.exit_code, 1);
  assertEquals(report.fix, "KROMETRAIL_CHROME points at /nope");
  assertEquals(report.checks.map((c) => c.section), ["browser", "video", "data"]);
});

Deno.test("a failure that is not needed does not block; a needed one without a fix names itself", () => {
  const notNeeded = summarize(
    [
      { section: "video", name: "ffmpeg", status: "fail", detail: "broken", needed: false },
    ],
    mcp,
    meta,
  );
  assertEquals(notNeeded.exit_code, 0);
  const bare = summarize(
    [
      { section: "launch", name: "launch + frame", status: "fail", detail: "not run", needed: true },
    ],
    mcp,
    meta,
  );
  assertEquals(bare.fix, "launch + frame: not run");
});

Deno.test("the text report: sections, status column, hints under warnings, MCP snippet, fix as the last line", () => {
  const report = summarize(
    [
      ok("browser", "platform default"),
      {
        section: "video",
        name: "ffmpeg",
        status: "warn",
        detail: "not on PATH",
        needed: false,
        fix: "install ffmpeg",
      },
      {
        section: "data",
        name: "data dir",
        status: "fail",
        detail: "/x is not writable",
        needed: true,
        fix: "point it",
      },
      { section: "profiles", name: "default", status: "ok", detail: "free", needed: false },
    ],
    mcp,
    meta,
  );
  const text = renderText(report);
  const lines = text.split("\n");
  for (const title of ["Browser", "Video (ffmpeg)", "Data dir", "Managed profiles"]) {
    assert(lines.includes(title), title);
  }
  assert(!lines.includes("Headless launch"), "a section without checks is left out");
  assertMatch(text, /^ {2}ok {4}platform default {2}platform default is fine$/m);
  assertMatch(text, /^ {2}WARN {2}ffmpeg +not on PATH\n +→ install ffmpeg$/m);
  assertMatch(text, /^ {2}FAIL {2}data dir +\/x is not writable$/m);
  assert(!text.includes("→ point it"), "a blocking failure's fix is the verdict, not a hint");
  assert(text.includes('"command": "npx"'));
  assert(text.includes("claude mcp add krometrail -- npx -y krometrail mcp"));
  assert(text.includes("codex mcp add krometrail -- npx -y krometrail mcp"));
  assertEquals(lines.at(-1), "fix: point it");
});

Deno.test("a ready report ends with the verdict and counts the warnings", () => {
  const text = renderText(summarize(
    [
      ok("browser", "x"),
      {
        section: "profiles",
        name: "default",
        status: "warn",
        detail: "held",
        needed: false,
        fix: "use another",
      },
    ],
    mcp,
    meta,
  ));
  assertMatch(
    text.split("\n").at(-1) ?? "",
    /^ready: everything krometrail needs is here \(1 warning above\)/,
  );
});

Deno.test("the JSON report is one object with the verdict, the checks and the snippet", () => {
  const report = summarize([ok("browser", "x")], mcp, meta);
  const parsed = JSON.parse(renderJson(report));
  assertEquals(parsed.ready, true);
  assertEquals(parsed.exit_code, 0);
  assertEquals(parsed.checks.length, 1);
  assertEquals(parsed.mcp.launch, { command: "npx", args: ["-y", "krometrail", "mcp"] });
});
