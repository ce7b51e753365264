/**
 * Issue 14, "prove the fix", over stdio and through the CLI in real Chromium: the scenario app
 * (fixtures/site/scenario_app.html) with its bug switched on by ?bug=1 and off by ?bug=0, one declared
 * scenario (fixtures/scenarios/prove_fix.json) captured in both modes. The comparison marks exactly
 * apply-coupon changed, with a difference image whose bounds cover the coupon badge that differs; a
 * capture compared with itself is unchanged with one digest whatever the rule order; a missing section is
 * unknown, never unchanged; each step's interaction anchors temporal_debug_bundle on its side.
 */
import { join } from "node:path";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { assert, assertEquals } from "../assert.ts";
import { e2e, fixtures, REPO_ROOT, structured, textOf, withServer } from "./harness.ts";

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface ArtifactDiff {
  artifact: string;
  status: string;
  before_state: string;
  after_state: string;
  visual_difference?: { uri?: string; path?: string; bounds: Box | null; changed_proportion: number };
}
interface StepComparison {
  step_id: string;
  status: string;
  before_interaction_id: string | null;
  after_interaction_id: string | null;
  artifact_diffs: ArtifactDiff[];
}
interface Comparison {
  overall_status: string;
  normalization: { sha256: string; rules: unknown[] };
  alignment: { status: string; failures: unknown[] };
  steps: StepComparison[];
}

const STEP_IDS = ["@initial", "fill-name", "add-item", "gift-wrap", "apply-coupon", "dismiss", "review"];
/** The coupon badge's box with the bug (the fixed one, 165 px wide, lies inside it): the fixture's header. */
const BADGE: Box = { x: 58, y: 456, width: 195, height: 40 };
const AMOUNT: Box = { x: 469, y: 466, width: 153, height: 20 };
const PANEL: Box = { x: 40, y: 440, width: 600, height: 72 };

async function scenario(origin: string, bug: 0 | 1): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(join(REPO_ROOT, "fixtures/scenarios/prove_fix.json"));
  const port = new URL(origin).port;
  const parsed = JSON.parse(text.replaceAll("{PORT}", port)) as Record<string, unknown>;
  parsed.start_url = String(parsed.start_url).replace("bug=1", `bug=${bug}`);
  return parsed;
}

const contains = (outer: Box, inner: Box, slack = 1) =>
  outer.x <= inner.x + slack && outer.y <= inner.y + slack &&
  outer.x + outer.width >= inner.x + inner.width - slack &&
  outer.y + outer.height >= inner.y + inner.height - slack;
const intersects = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

function assertFixProven(c: Comparison): ArtifactDiff {
  assertEquals(c.alignment.status, "aligned", JSON.stringify(c.alignment));
  assertEquals(c.steps.map((s) => s.step_id), STEP_IDS);
  const changed = c.steps.filter((s) => s.status === "changed").map((s) => s.step_id);
  assertEquals(
    changed,
    ["apply-coupon"],
    JSON.stringify(c.steps.map((s) => [s.step_id, s.status, s.artifact_diffs])),
  );
  for (const s of c.steps) if (s.step_id !== "apply-coupon") assertEquals(s.status, "unchanged", s.step_id);
  assertEquals(c.overall_status, "changed");
  const coupon = c.steps.find((s) => s.step_id === "apply-coupon");
  const shot = coupon?.artifact_diffs.find((d) => d.artifact === "screenshot");
  assert(shot?.status === "changed", JSON.stringify(coupon));
  const v = shot.visual_difference;
  assert(v?.bounds, JSON.stringify(shot));
  assert(
    contains(v.bounds, BADGE),
    `bounds ${JSON.stringify(v.bounds)} do not cover the badge ${JSON.stringify(BADGE)}`,
  );
  assert(intersects(v.bounds, AMOUNT), `bounds ${JSON.stringify(v.bounds)} miss the amount`);
  assert(contains(PANEL, v.bounds), `bounds ${JSON.stringify(v.bounds)} leave the total panel`);
  assert(v.changed_proportion > 0 && v.changed_proportion < 0.05, String(v.changed_proportion));
  for (const kind of ["dom", "accessibility"]) {
    assertEquals(coupon?.artifact_diffs.find((d) => d.artifact === kind)?.status, "changed", kind);
  }
  return shot;
}

Deno.test(
  "scenario over MCP: capture with and without the bug, the comparison proves the fix",
  e2e,
  async () => {
    await withServer(async (server, site) => {
      const buggy = await server.call("capture_browser_scenario", await scenario(site.origin, 1));
      assert(!buggy.isError, textOf(buggy));
      const bug = structured(buggy);
      const steps = bug.steps as Array<
        {
          step_id: string;
          status: string;
          interaction_id: string | null;
          artifacts: Record<string, { state: string; value?: Record<string, unknown> }>;
        }
      >;
      assertEquals(steps.map((s) => s.step_id), STEP_IDS);
      for (const s of steps) assertEquals(s.status, "completed", JSON.stringify(s));
      // Screenshots are resources with a digest; the bytes stay out of the response and in the capture file.
      const shot = steps[1].artifacts.screenshot.value ?? {};
      assert(String(shot.uri).startsWith("krometrail://evidence/screenshots/"), JSON.stringify(shot));
      assert(/^[0-9a-f]{64}$/.test(String(shot.sha256)));
      assertEquals(shot.data_base64, undefined);
      assertEquals((bug.completeness as { equality_eligible: boolean }).equality_eligible, true);

      const fixedResult = await server.call("capture_browser_scenario", await scenario(site.origin, 0));
      assert(!fixedResult.isError, textOf(fixedResult));
      const fixed = structured(fixedResult);

      const compared = await server.call("compare_web_captures", {
        before: bug.capture_uri,
        after: fixed.capture_uri,
      });
      assert(!compared.isError, textOf(compared));
      const c = structured(compared) as unknown as Comparison;
      const shotDiff = assertFixProven(c);
      // The captures' structuredContent, passed back inline, compares the same (screenshots by their resources).
      const inline = await server.call("compare_web_captures", { before: bug, after: fixed });
      assert(!inline.isError, textOf(inline));
      const inlineResult = structured(inline) as unknown as Comparison;
      assertFixProven(inlineResult);
      assertEquals(inlineResult.normalization.sha256, c.normalization.sha256);
      assert(textOf(compared).includes("apply-coupon"), textOf(compared));
      // The difference image is an evidence resource, a PNG.
      const image = await server.client.readResource({ uri: String(shotDiff.visual_difference?.uri) });
      const blob = image.contents[0] as { blob?: string; mimeType?: string };
      assertEquals(blob.mimeType, "image/png");

      // Each step anchors the temporal tools on either side.
      const coupon = c.steps.find((s) => s.step_id === "apply-coupon");
      for (const id of [coupon?.before_interaction_id, coupon?.after_interaction_id]) {
        assert(id, JSON.stringify(coupon));
        const bundle = await server.call("temporal_debug_bundle", { interaction_id: id });
        assert(!bundle.isError, textOf(bundle));
      }

      // A capture compared with itself: all unchanged, one digest on every call and in any rule order.
      const rules = [
        { rule_id: "b-names", artifacts: ["dom", "accessibility"], match: "Ada", replacement: "NAME" },
        { rule_id: "a-total", artifacts: ["accessibility", "dom"], match: "$28.00", replacement: "TOTAL" },
      ];
      const digests = new Set<string>();
      for (const order of [rules, [...rules].reverse(), rules]) {
        const self = structured(
          await server.call("compare_web_captures", {
            before: bug.capture_uri,
            after: bug.capture_uri,
            rules: order,
          }),
        ) as unknown as Comparison;
        assertEquals(
          self.overall_status,
          "unchanged",
          JSON.stringify(self.steps.filter((s) => s.status !== "unchanged")),
        );
        for (const s of self.steps) assertEquals(s.status, "unchanged", s.step_id);
        digests.add(self.normalization.sha256);
      }
      assertEquals(digests.size, 1, [...digests].join(" "));
      const noRules = structured(
        await server.call("compare_web_captures", { before: bug.capture_uri, after: bug.capture_uri }),
      ) as unknown as Comparison;
      assert(!digests.has(noRules.normalization.sha256), "the rules are part of the commitment");

      // A missing section compares as unknown, never unchanged.
      const file = await server.client.readResource({ uri: String(bug.capture_uri) });
      const doc = JSON.parse(
        new TextDecoder().decode(
          Uint8Array.from(
            atob(String((file.contents[0] as { blob?: string }).blob ?? "")),
            (ch) => ch.charCodeAt(0),
          ),
        ),
      ) as {
        steps: Array<{ artifacts: Record<string, unknown>; completeness: Record<string, unknown> }>;
        completeness: Record<string, unknown>;
      };
      doc.steps[3].artifacts.dom = { state: "missing", reason: "the test removed it" };
      doc.steps[3].completeness = {
        status: "incomplete",
        equality_eligible: false,
        missing_sections: ["dom"],
        truncated_sections: [],
      };
      doc.completeness = {
        status: "incomplete",
        equality_eligible: false,
        missing_sections: ["dom"],
        truncated_sections: [],
      };
      const withGap = structured(
        await server.call("compare_web_captures", { before: bug.capture_uri, after: doc }),
      ) as unknown as Comparison;
      assertEquals(withGap.overall_status, "unknown");
      const gap = withGap.steps[3];
      assertEquals(gap.status, "unknown");
      const domDiff = gap.artifact_diffs.find((d) => d.artifact === "dom");
      assertEquals([domDiff?.status, domDiff?.before_state, domDiff?.after_state], [
        "unknown",
        "captured",
        "missing",
      ]);
    });
  },
);

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", ...args],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), KROMETRAIL_HEADLESS: "1", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("scenario through the CLI: capture twice, compare, exit codes", e2e, async () => {
  // The CLI commands are the processes under test: only the fixture site is needed, no MCP server.
  const site = fixtures();
  try {
    const dir = await Deno.makeTempDir({ prefix: "krometrail-scn-cli-" });
    const env = { KROMETRAIL_DATA_DIR: join(dir, "data") };
    try {
      const input = join(dir, "bug.json");
      await Deno.writeTextFile(input, JSON.stringify(await scenario(site.origin, 1)));
      const bug = await cli(["capture-browser-scenario", input], env);
      assertEquals(bug.code, 0, bug.stderr);
      assert(bug.stderr.includes("apply-coupon"), "progress goes to stderr");
      const bugDoc = JSON.parse(bug.stdout) as {
        steps: Array<{ artifacts: { screenshot: { value?: { data_base64?: string } } } }>;
      };
      // The CLI's capture is self-contained: screenshots inline, so it compares in another process.
      assert((bugDoc.steps[1].artifacts.screenshot.value?.data_base64?.length ?? 0) > 100);
      await Deno.writeTextFile(join(dir, "a.json"), bug.stdout);

      // Inline INPUT_JSON works the same.
      const fixed = await cli(
        ["capture-browser-scenario", JSON.stringify(await scenario(site.origin, 0))],
        env,
      );
      assertEquals(fixed.code, 0, fixed.stderr);
      await Deno.writeTextFile(join(dir, "b.json"), fixed.stdout);

      const out = join(dir, "out");
      const compared = await cli([
        "compare-web-captures",
        join(dir, "a.json"),
        join(dir, "b.json"),
        "--out",
        out,
      ], env);
      assertEquals(compared.code, 1, compared.stderr);
      const shot = assertFixProven(JSON.parse(compared.stdout) as Comparison);
      const path = String(shot.visual_difference?.path);
      assert(path.startsWith(out), path);
      const png = await Deno.readFile(path);
      assertEquals([...png.slice(1, 4)], [0x50, 0x4e, 0x47]);

      const same = await cli(["compare-web-captures", join(dir, "a.json"), join(dir, "a.json")], env);
      assertEquals(same.code, 0, same.stderr);
      assertEquals((JSON.parse(same.stdout) as Comparison).overall_status, "unchanged");

      // Invalid input: exit 2 with the structured error on stdout; nothing ran.
      const bad = await cli([
        "capture-browser-scenario",
        '{"browser":{"mode":"launch"},"start_url":"http://u:p@127.0.0.1/","actions":[]}',
      ], env);
      assertEquals(bad.code, 2, bad.stderr);
      assertEquals((JSON.parse(bad.stdout) as { error: { code: string } }).error.code, "invalid_scenario");
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  } finally {
    await site.close();
  }
});
