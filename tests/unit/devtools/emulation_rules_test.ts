import { assert, assertEquals } from "../../assert.ts";
import {
  composeRules,
  isPassRule,
  type NetworkRuleSource,
  pageNetworkRules,
} from "../../../src/browser/network_rules.ts";
import type { PageTarget, TargetOverride } from "../../../src/browser/targets.ts";
import { EmulationOverride } from "../../../src/devtools/emulation.ts";
import { mergeEmulation, throttleOf } from "../../../src/devtools/emulation_presets.ts";
import { originConditions } from "../../../src/scenario/guard_match.ts";

const APP = "http://127.0.0.1:8123";
const slow3g = mergeEmulation({}, { network: "slow_3g" }).next;
const offline = mergeEmulation({}, { network: "offline" }).next;

/** pageNetworkRules reads only the page's overrides. */
function pageWith(overrides: Array<[string, TargetOverride]>): PageTarget {
  return { overrides: new Map(overrides) } as unknown as PageTarget;
}

function guardSource(rules = originConditions([APP])): NetworkRuleSource {
  return { networkRestrictions: () => rules, apply: () => [] };
}

Deno.test("composeRules: without page-wide conditions the guard's rules go out as they are", () => {
  const guard = originConditions([APP]);
  assertEquals(composeRules(guard), guard);
  assertEquals(composeRules([]), []);
});

Deno.test("composeRules: throttling keeps every blocked origin offline and throttles the allowed ones", () => {
  const guard = originConditions([APP]);
  const t = throttleOf(slow3g.network ?? assertNever());
  const rules = composeRules(guard, t);
  assertEquals(rules.length, guard.length + 1);
  // Same patterns in the same order, so the first match is still the guard's decision.
  assertEquals(rules.slice(0, guard.length).map((r) => r.urlPattern), guard.map((r) => r.urlPattern));
  for (const [i, r] of guard.entries()) {
    if (r.offline) assertEquals(rules[i], r, `blocked ${r.urlPattern} stays offline, unthrottled`);
    else assertEquals(rules[i], { ...r, ...t }, `allowed ${r.urlPattern} gets the throttling`);
  }
  assertEquals(rules[rules.length - 1], { urlPattern: "", ...t });
  assert(guard.some(isPassRule) && guard.some((r) => r.offline));
});

Deno.test("composeRules: page-wide offline takes the allowed origins offline too; the blocking stays", () => {
  const rules = composeRules(originConditions([APP]), throttleOf(offline.network ?? assertNever()));
  assert(rules.every((r) => r.offline), JSON.stringify(rules));
  assertEquals(rules[rules.length - 1].urlPattern, "");
});

Deno.test("pageNetworkRules: guard and emulate on one page compose, in either order, and each leaves alone", () => {
  const guard = guardSource();
  const emulation = new EmulationOverride(slow3g);
  const t = throttleOf(slow3g.network ?? assertNever());
  const expected = composeRules(originConditions([APP]), t);
  assertEquals(pageNetworkRules(pageWith([["scenario_guard:1", guard], ["emulation", emulation]])), expected);
  assertEquals(pageNetworkRules(pageWith([["emulation", emulation], ["scenario_guard:1", guard]])), expected);
  // emulate cleared: the guard's rules alone; the guard uninstalled: the throttling alone.
  assertEquals(pageNetworkRules(pageWith([["scenario_guard:1", guard]])), originConditions([APP]));
  assertEquals(pageNetworkRules(pageWith([["emulation", emulation]])), [{ urlPattern: "", ...t }]);
  // Emulation without a network part contributes nothing; other overrides are not rule sources.
  const cpuOnly = new EmulationOverride(mergeEmulation({}, { cpu_slowdown: 4 }).next);
  const viewport: TargetOverride = { apply: () => [] };
  assertEquals(pageNetworkRules(pageWith([["viewport", viewport], ["emulation", cpuOnly]])), []);
  // A guard that does not hold the page (out of scope, or stopped) restricts nothing.
  const idle = guardSource([]);
  assertEquals(pageNetworkRules(pageWith([["g", idle], ["emulation", emulation]])), [{
    urlPattern: "",
    ...t,
  }]);
});

function assertNever(): never {
  throw new Error("preset resolved to none");
}
