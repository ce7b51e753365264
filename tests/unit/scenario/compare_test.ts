import { assert, assertEquals } from "../../assert.ts";
import type { ScenarioCapture } from "../../../src/scenario/capture.ts";
import { classifyCompleteness } from "../../../src/scenario/capture.ts";
import {
  compareCaptures,
  type ComparisonResult,
  type StepComparison,
} from "../../../src/scenario/compare.ts";
import { sha256Hex } from "../../../src/scenario/normalize.ts";
import { capture, event, findStep, ORIGIN, step, text } from "./capture_factory.ts";

function stepOf(result: ComparisonResult, id: string): StepComparison {
  const found = result.steps.find((s) => s.step_id === id);
  assert(found !== undefined, `step ${id} is in the result`);
  return found;
}

function statuses(result: ComparisonResult): Record<string, string> {
  return Object.fromEntries(result.steps.map((s) => [s.step_id, s.status]));
}

const RULES = [
  { rule_id: "zz", artifacts: ["dom" as const, "url" as const], match: "nothing-here", replacement: "" },
  { rule_id: "aa", artifacts: ["events" as const], match: "no-such", replacement: "x" },
];

// --- tests ---

Deno.test("a capture compared with itself (and with another run of it) is all unchanged", () => {
  const a = capture();
  for (const other of [a, capture()]) {
    const result = compareCaptures(a, other, RULES);
    assertEquals(result.overall_status, "unchanged");
    assertEquals(result.alignment, {
      status: "aligned",
      aligned_steps: 3,
      before_only: [],
      after_only: [],
      failures: [],
    });
    assertEquals(statuses(result), { "@initial": "unchanged", open: "unchanged", press: "unchanged" });
    assertEquals(result.artifact_diffs, { total: 0, changed: 0, unknown: 0 });
    assertEquals(result.schema_version, 1);
    assertEquals(result.comparison_kind, "browser_scenario");
    assertEquals(result.context.start_url_differs, false);
  }
});

Deno.test("the normalization digest is identical on every run and in any rule order; so is the result", () => {
  const a = capture();
  const first = compareCaptures(a, a, RULES);
  const again = compareCaptures(a, a, RULES);
  const reordered = compareCaptures(a, a, [
    { ...RULES[1] },
    { ...RULES[0], artifacts: [...RULES[0].artifacts].reverse() },
  ]);
  assertEquals(again.normalization.sha256, first.normalization.sha256);
  assertEquals(reordered.normalization, first.normalization);
  assertEquals(reordered, first);
  assertEquals(first.normalization.rules.map((r) => r.rule_id), ["aa", "zz"]);
  assertEquals(first.normalization.rules[1].artifacts, ["dom", "url"]);
  assert(/^[0-9a-f]{64}$/.test(first.normalization.sha256));
  assert(compareCaptures(a, a).normalization.sha256 !== first.normalization.sha256);
});

Deno.test("rule order independence holds for a result the rules change", () => {
  const before = capture();
  const after = capture();
  findStep(before, "press").artifacts.dom = { state: "captured", value: text("<p>build 1111 at 10:00</p>") };
  findStep(after, "press").artifacts.dom = { state: "captured", value: text("<p>build 2222 at 10:00</p>") };
  const rules = [
    { rule_id: "b", artifacts: ["dom" as const], match: "2222", replacement: "N" },
    { rule_id: "a", artifacts: ["dom" as const], match: "1111", replacement: "N" },
  ];
  assertEquals(compareCaptures(before, after).overall_status, "changed");
  const forward = compareCaptures(before, after, rules);
  const backward = compareCaptures(before, after, [...rules].reverse());
  assertEquals(forward.overall_status, "unchanged");
  assertEquals(backward, forward);
  // A rule over another kind leaves the DOM difference visible.
  const urlOnly = compareCaptures(before, after, [{ ...rules[0], artifacts: ["url"] }, {
    ...rules[1],
    artifacts: ["url"],
  }]);
  assertEquals(statuses(urlOnly).press, "changed");
});

Deno.test("a changed screenshot digest marks exactly that step changed", () => {
  const before = capture();
  const after = capture();
  const shot = findStep(after, "press").artifacts.screenshot;
  assert(shot.state === "captured");
  shot.value.sha256 = sha256Hex("another png");
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "changed");
  assertEquals(statuses(result), { "@initial": "unchanged", open: "unchanged", press: "changed" });
  const press = stepOf(result, "press");
  assertEquals(press.artifact_diffs.length, 1);
  const diff = press.artifact_diffs[0];
  assertEquals(diff.artifact, "screenshot");
  assertEquals(diff.status, "changed");
  assertEquals([diff.before_state, diff.after_state], ["captured", "captured"]);
  assert(
    diff.before_sha256 !== null && diff.after_sha256 !== null && diff.before_sha256 !== diff.after_sha256,
  );
  assertEquals(diff.reason, null);
  for (const side of [diff.before, diff.after]) {
    assert(side.state === "captured");
    const value = side.value as Record<string, unknown>;
    assertEquals("data_base64" in value, false);
    assertEquals(value.width, 800);
  }
  assertEquals(press.before_interaction_id?.startsWith("int-"), true);
  assert(press.before_interaction_id !== press.after_interaction_id);
  assertEquals(result.artifact_diffs, { total: 1, changed: 1, unknown: 0 });
  // The inputs keep their PNG data.
  const kept = findStep(after, "press").artifacts.screenshot;
  assert(kept.state === "captured" && kept.value.data_base64 !== undefined);
});

Deno.test("a screenshot of another size with the same digest is changed", () => {
  const before = capture();
  const after = capture();
  const shot = findStep(after, "open").artifacts.screenshot;
  assert(shot.state === "captured");
  shot.value.width = 801;
  assertEquals(statuses(compareCaptures(before, after)).open, "changed");
});

Deno.test("a step that failed on one side is changed via action_state", () => {
  const before = capture();
  const after = capture();
  const press = findStep(after, "press");
  press.status = "failed";
  press.error = { code: "target_not_found", message: "no button" };
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "changed");
  const diffs = stepOf(result, "press").artifact_diffs;
  assertEquals(diffs.map((d) => d.artifact), ["action_state"]);
  const afterState = diffs[0].after;
  assert(afterState.state === "captured");
  assertEquals((afterState.value as { status: string }).status, "failed");
});

Deno.test("elapsed and session times, event sequence and per-run ids never make a difference", () => {
  const before = capture();
  const after = capture();
  findStep(after, "open").elapsed_ms = 9999;
  findStep(after, "open").started_ms = 123456;
  after.events.items = after.events.items.map((e) => ({ ...e, sequence: e.sequence + 40, frame_id: "F9" }));
  assertEquals(compareCaptures(before, after).overall_status, "unchanged");
});

Deno.test("events: another order within a step is unchanged, another text is changed", () => {
  const before = capture();
  const after = capture();
  const extra = (c: ScenarioCapture, seq: number, t: string) =>
    c.events.items.push(event(seq, 1, { text: t }));
  extra(before, 4, "first");
  extra(before, 5, "second");
  extra(after, 4, "second");
  extra(after, 5, "first");
  assertEquals(compareCaptures(before, after).overall_status, "unchanged");
  after.events.items[3] = event(4, 1, { text: "SECOND" });
  const result = compareCaptures(before, after);
  assertEquals(statuses(result), { "@initial": "unchanged", open: "changed", press: "unchanged" });
  assertEquals(stepOf(result, "open").artifact_diffs.map((d) => d.artifact), ["events"]);
});

Deno.test("relative_to_start_url: runs from ?bug=1 and ?bug=0 compare where they went, not where they began", () => {
  const before = capture(`${ORIGIN}/app?bug=1`);
  const after = capture(`${ORIGIN}/app?bug=0`);
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "unchanged");
  assertEquals(result.context.start_url_differs, true);
  assertEquals(result.context.before.start_url, `${ORIGIN}/app?bug=1`);
  assertEquals(result.context.after.start_url, `${ORIGIN}/app?bug=0`);
  assert(result.limitations.some((l) => l.includes("?bug=1") && l.includes("?bug=0")));
  // Somewhere else relative to the start is still a difference.
  findStep(after, "@initial").artifacts.url = { state: "captured", value: `${ORIGIN}/app?bug=0#moved` };
  const moved = compareCaptures(before, after);
  assertEquals(statuses(moved)["@initial"], "changed");
  assertEquals(stepOf(moved, "@initial").artifact_diffs.map((d) => d.artifact), ["url"]);
});

Deno.test("relative_to_start_url: a start URL without the flag is no prefix of every other page", () => {
  const before = capture(`${ORIGIN}/`);
  const after = capture(`${ORIGIN}/?bug=1`);
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "unchanged");
  assertEquals(result.context.start_url_differs, true);
});

Deno.test("DOM and accessibility are compared by normalized text", () => {
  const before = capture();
  const after = capture();
  const dom = findStep(before, "open").artifacts.dom;
  assert(dom.state === "captured");
  findStep(after, "open").artifacts.dom = {
    state: "captured",
    value: text(dom.value.text.replaceAll("\n", "   \r\n\r\n\r\n")),
  };
  const result = compareCaptures(before, after);
  assertEquals(statuses(result).open, "changed"); // blank lines inserted: one blank line survives
  findStep(after, "open").artifacts.dom = {
    state: "captured",
    value: text(dom.value.text.replaceAll("\n", "  \r\n")),
  };
  assertEquals(compareCaptures(before, after).overall_status, "unchanged");
});

type Mutate = (before: ScenarioCapture, after: ScenarioCapture) => void;

Deno.test("unknown never becomes unchanged", () => {
  const cases: {
    name: string;
    mutate: Mutate;
    artifact: string;
    states: [string, string];
    steps?: string[];
  }[] = [
    {
      name: "a section missing after",
      mutate: (_b, a) => {
        findStep(a, "press").artifacts.dom = {
          state: "missing",
          reason: "the DOM read timed out after 5000 ms",
        };
        findStep(a, "press").completeness = classifyCompleteness(["dom"], []);
        a.completeness = classifyCompleteness(["dom"], []);
      },
      artifact: "dom",
      states: ["captured", "missing"],
      steps: ["press"],
    },
    {
      name: "truncated events",
      mutate: (_b, a) => {
        a.events.dropped = 3;
        a.completeness = classifyCompleteness([], ["events"]);
      },
      artifact: "events",
      states: ["captured", "truncated"],
    },
    {
      name: "events not requested on one side",
      mutate: (b) => {
        b.capture_plan.events = [];
        b.events = { retained: 0, dropped: 0, items: [] };
      },
      artifact: "events",
      states: ["not_requested", "captured"],
    },
    {
      name: "a screenshot not requested on one side",
      mutate: (b) => {
        findStep(b, "open").artifacts.screenshot = { state: "not_requested" };
      },
      artifact: "screenshot",
      states: ["not_requested", "captured"],
      steps: ["open"],
    },
    {
      name: "storage truncated before",
      mutate: (b) => {
        findStep(b, "@initial").artifacts.storage = {
          state: "truncated",
          observed: 10,
          retained: 4,
          reason: "read stopped",
        };
      },
      artifact: "storage",
      states: ["truncated", "captured"],
      steps: ["@initial"],
    },
  ];
  for (const c of cases) {
    const before = capture();
    const after = capture();
    c.mutate(before, after);
    const result = compareCaptures(before, after);
    assertEquals(result.overall_status, "unknown", c.name);
    const affected = c.steps ?? ["@initial", "open", "press"];
    for (const s of result.steps) {
      assertEquals(
        s.status,
        affected.includes(s.step_id) ? "unknown" : "unchanged",
        `${c.name}: ${s.step_id}`,
      );
    }
    const diff = stepOf(result, affected[0]).artifact_diffs.find((d) => d.artifact === c.artifact);
    assert(diff !== undefined, c.name);
    assertEquals(diff.status, "unknown", c.name);
    assertEquals([diff.before_state, diff.after_state], c.states, c.name);
    assertEquals(diff.before.state, c.states[0], c.name);
    assertEquals(diff.after.state, c.states[1], c.name);
    assertEquals(diff.before_sha256 === null, c.states[0] !== "captured", c.name);
    assertEquals(diff.after_sha256 === null, c.states[1] !== "captured", c.name);
    assert(
      diff.reason !== null && diff.reason.includes(c.states[0]) && diff.reason.includes(c.states[1]),
      c.name,
    );
    assertEquals(result.artifact_diffs.unknown, affected.length, c.name);
  }
});

Deno.test("an artifact requested on neither side is not compared and not reported", () => {
  const before = capture();
  const after = capture();
  for (const c of [before, after]) findStep(c, "open").artifacts.history = { state: "not_requested" };
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "unchanged");
  assertEquals(stepOf(result, "open").artifact_diffs, []);
});

Deno.test("a capture that is not equality-eligible cannot give unchanged, even when every step is equal", () => {
  const before = capture();
  const after = capture();
  after.completeness = classifyCompleteness(["accessibility"], []);
  const result = compareCaptures(before, after);
  assertEquals(statuses(result), { "@initial": "unchanged", open: "unchanged", press: "unchanged" });
  assertEquals(result.overall_status, "unknown");
  assert(
    result.limitations.some((l) => l.includes("after capture is incomplete") && l.includes("accessibility")),
  );
});

Deno.test("an observed difference proves changed beside unknown artifacts and alignment failures", () => {
  const before = capture();
  const after = capture();
  findStep(after, "open").artifacts.dom = { state: "missing", reason: "timed out" };
  findStep(after, "press").artifacts.url = { state: "captured", value: `${ORIGIN}/elsewhere` };
  after.steps.push(step(3, "extra", "hover", `${ORIGIN}/page`));
  const result = compareCaptures(before, after);
  assertEquals(result.overall_status, "changed");
  assertEquals(statuses(result), { "@initial": "unchanged", open: "unknown", press: "changed" });
  assertEquals(result.alignment.status, "partial");
  assertEquals(result.artifact_diffs, { total: 2, changed: 1, unknown: 1 });
});

Deno.test("alignment failures: each is reported and blocks an unchanged claim", () => {
  const cases: {
    name: string;
    mutate: Mutate;
    failures: { code: string; step_id: string | null }[];
    status: "partial" | "failed";
    aligned: string[];
    before_only?: string[];
    after_only?: string[];
  }[] = [
    {
      name: "duplicate before step id",
      mutate: (b) => b.steps.push(step(3, "press", "click", `${ORIGIN}/page`)),
      failures: [{ code: "duplicate_before_step_id", step_id: "press" }],
      status: "partial",
      aligned: ["@initial", "open"],
    },
    {
      name: "duplicate after step id",
      mutate: (_b, a) => a.steps.splice(2, 0, step(2, "open", "goto", `${ORIGIN}/page`)),
      failures: [{ code: "duplicate_after_step_id", step_id: "open" }],
      status: "partial",
      aligned: ["@initial", "press"],
    },
    {
      name: "missing before step",
      mutate: (b) => b.steps.pop(),
      failures: [{ code: "missing_before_step", step_id: "press" }],
      status: "partial",
      aligned: ["@initial", "open"],
      after_only: ["press"],
    },
    {
      name: "missing after step",
      mutate: (_b, a) => a.steps.splice(1, 1),
      failures: [{ code: "missing_after_step", step_id: "open" }],
      status: "partial",
      aligned: ["@initial", "press"],
      before_only: ["open"],
    },
    {
      name: "no step in common",
      mutate: (b, a) => {
        b.steps = b.steps.map((s) => ({ ...s, step_id: `b-${s.step_id}` }));
        a.steps = a.steps.slice(0, 1).map((s) => ({ ...s, step_id: "a-only" }));
      },
      failures: [
        { code: "missing_before_step", step_id: "a-only" },
        { code: "missing_after_step", step_id: "b-@initial" },
        { code: "missing_after_step", step_id: "b-open" },
        { code: "missing_after_step", step_id: "b-press" },
      ],
      status: "failed",
      aligned: [],
      before_only: ["b-@initial", "b-open", "b-press"],
      after_only: ["a-only"],
    },
    {
      name: "action mismatch",
      mutate: (_b, a) => {
        findStep(a, "press").action = "hover";
      },
      failures: [{ code: "action_mismatch", step_id: "press" }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
    {
      name: "browser version",
      mutate: (_b, a) => {
        a.browser.version = "141.0.0.0";
      },
      failures: [{ code: "capture_context_mismatch", step_id: null }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
    {
      name: "browser product",
      mutate: (_b, a) => {
        a.browser.product = "HeadlessChrome";
      },
      failures: [{ code: "capture_context_mismatch", step_id: null }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
    {
      name: "start origin",
      mutate: (_b, a) => {
        a.scenario.start_origin = "http://localhost:4100";
      },
      failures: [{ code: "capture_context_mismatch", step_id: null }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
    {
      name: "allowed origins",
      mutate: (_b, a) => {
        a.scenario.allowed_origins = [ORIGIN];
      },
      failures: [{ code: "capture_context_mismatch", step_id: null }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
    {
      name: "environment (dark mode against light)",
      mutate: (_b, a) => {
        a.environment = { ...a.environment, color_scheme: "dark" };
      },
      failures: [{ code: "capture_context_mismatch", step_id: null }],
      status: "partial",
      aligned: ["@initial", "open", "press"],
    },
  ];
  for (const c of cases) {
    const before = capture();
    const after = capture();
    c.mutate(before, after);
    const result = compareCaptures(before, after);
    assertEquals(
      result.alignment.failures.map((f) => ({ code: f.code, step_id: f.step_id })),
      c.failures,
      c.name,
    );
    for (const f of result.alignment.failures) assert(f.reason.length > 0, c.name);
    assertEquals(result.alignment.status, c.status, c.name);
    assertEquals(result.steps.map((s) => s.step_id), c.aligned, c.name);
    assertEquals(result.alignment.aligned_steps, c.aligned.length, c.name);
    assertEquals(result.alignment.before_only, c.before_only ?? [], c.name);
    assertEquals(result.alignment.after_only, c.after_only ?? [], c.name);
    assert(result.overall_status !== "unchanged", c.name);
    assert(result.limitations.some((l) => l.startsWith(`Alignment is ${c.status}`)), c.name);
    if (c.name === "action mismatch") {
      const press = stepOf(result, "press");
      assertEquals([press.before_action, press.after_action], ["click", "hover"]);
      assertEquals(result.overall_status, "changed");
    } else {
      assertEquals(result.overall_status, "unknown", c.name);
    }
  }
});

Deno.test("context mismatch reasons name what differs; the same origin set in another order is no failure", () => {
  const before = capture();
  const after = capture();
  after.scenario.allowed_origins = [...after.scenario.allowed_origins].reverse();
  assertEquals(compareCaptures(before, after).alignment.failures, []);
  after.environment = { color_scheme: "light", viewport: { height: 600, width: 800 } };
  assertEquals(compareCaptures(before, after).alignment.failures, [], "key order is not a difference");
  after.environment = { color_scheme: "dark", viewport: { height: 600, width: 800 } };
  after.browser.version = "999";
  const [failure] = compareCaptures(before, after).alignment.failures;
  assert(failure.reason.includes("environment") && failure.reason.includes("dark"), failure.reason);
  assert(failure.reason.includes("browser version") && failure.reason.includes("999"), failure.reason);
});

Deno.test("the result reports both sides' context", () => {
  const before = capture();
  const after = capture();
  const result = compareCaptures(before, after);
  assertEquals(result.context.before, {
    capture_id: before.capture_id,
    session_id: before.session_id,
    start_url: before.scenario.start_url,
    browser: { product: "Chrome", version: "140.0.7339.0" },
  });
  assertEquals(result.context.after.capture_id, after.capture_id);
  assertEquals(result.normalization.built_in_rules.includes("relative_to_start_url"), true);
});
