/** scanTransitions: every flip in a window, each at the exact event that caused it. */
import { assert, assertEquals } from "../../assert.ts";
import process from "node:process";
import type { eventWithTime } from "@rrweb/types";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { parseSelector } from "../../../src/pagestate/selector.ts";
import { parsePredicate } from "../../../src/pagestate/predicates.ts";
import { scanTransitions, scanTransitionsAsync } from "../../../src/pagestate/transitions.ts";
import type { TimedDomEvent } from "../../../src/pagestate/dom_types.ts";
import { addsFor, idOf, Rec } from "./rrweb_events.ts";

const MS = 1_000_000;

/** The checkout story as rrweb events, with the session time of each step. */
function story() {
  const r = new Rec();
  const optionNodes = [r.el("option", { value: "on" }, "Ontario"), r.el("option", { value: "qc" }, "Quebec")];
  const status = r.el("p", { id: "status" }, "ready");
  const page = r.page(
    r.el(
      "form",
      { id: "checkout" },
      r.el("select", { id: "province", name: "province" }, ...optionNodes),
      r.el("div", { id: "errors", role: "alert" }),
      r.el("button", { id: "submit", type: "submit" }, "Pay"),
    ),
    r.el("div", { id: "flipper", "data-state": "on" }, "flipper"),
    status,
  );
  const id = (domId: string) => idOf(page, domId);
  const options = () => optionNodes.map((o) => o.id);
  const events: TimedDomEvent[] = [];
  const at = (ms: number, e: eventWithTime) => events.push({ at_ns: ms * MS, event: e });
  at(0, r.meta("http://127.0.0.1/checkout.html"));
  at(0, r.full(page));
  for (let i = 0; i < 5; i++) at(100 + i, r.mouseMove(i, i));
  at(200, r.scroll(id("checkout"), 0, 10));
  at(1000, r.mutation({ removes: options().map((o) => ({ parentId: id("province"), id: o })) }));
  const errorDiv = r.el("div", { class: "error" }, "Province is required");
  at(1010, r.mutation({ adds: addsFor(id("errors"), errorDiv) }));
  at(1700, r.mutation({ attributes: [{ id: id("submit"), attributes: { disabled: "" } }] }));
  const statusText = status.type === 2 ? status.childNodes[0].id : -1;
  at(1700, r.mutation({ texts: [{ id: statusText, value: "provinces unavailable" }] }));
  at(2000, r.mutation({ attributes: [{ id: id("flipper"), attributes: { "data-state": "off" } }] }));
  at(2150, r.mutation({ attributes: [{ id: id("flipper"), attributes: { "data-state": "on" } }] }));
  at(2300, r.mutation({ attributes: [{ id: id("flipper"), attributes: { "data-state": "off" } }] }));
  // Two events at one instant that cancel out: one probe, no transition.
  at(2500, r.mutation({ attributes: [{ id: id("flipper"), attributes: { "data-state": "on" } }] }));
  at(2500, r.mutation({ attributes: [{ id: id("flipper"), attributes: { "data-state": "off" } }] }));
  at(3000, r.mutation({ removes: [{ parentId: id("checkout"), id: id("submit") }] }));
  return { events };
}

const scan = (
  events: TimedDomEvent[],
  selector: string,
  predicate: unknown,
  fromMs = 0,
  toMs = 10_000,
) =>
  scanTransitions(
    new DomMirror(),
    events,
    fromMs * MS,
    toMs * MS,
    parseSelector(selector),
    parsePredicate(predicate),
  );

Deno.test("transitions: a monotonic predicate flips once, at the exact event", () => {
  const { events } = story();
  const r = scan(events, "select[name=province]", { kind: "optionCount", equals: 0 });
  assertEquals(r.initial, false);
  assertEquals(r.transitions, [{ at_ns: 1000 * MS, from: false, to: true }]);
  assertEquals(r.final, true);
  const msg = scan(events, "#errors .error", { kind: "exists" });
  assertEquals(msg.transitions, [{ at_ns: 1010 * MS, from: false, to: true }]);
});

Deno.test("transitions: a predicate that flips three times yields three transitions", () => {
  const { events } = story();
  const r = scan(events, "#flipper", { kind: "attributeEquals", name: "data-state", equals: "on" });
  assertEquals(r.initial, true);
  assertEquals(r.transitions.map((t) => [t.at_ns / MS, t.from, t.to]), [
    [2000, true, false],
    [2150, false, true],
    [2300, true, false],
  ]);
  assertEquals(r.final, false);
});

Deno.test("transitions: elementMissing is its own value, distinct from false", () => {
  const { events } = story();
  const r = scan(events, "#submit", { kind: "propertyEquals", property: "disabled", equals: true });
  assertEquals(r.initial, false);
  assertEquals(r.transitions, [
    { at_ns: 1700 * MS, from: false, to: true },
    { at_ns: 3000 * MS, from: true, to: "elementMissing" },
  ]);
  // Before the first snapshot there is no document: exists is false, the others elementMissing.
  const early = story().events.map((e) => ({ ...e, at_ns: e.at_ns + 500 * MS }));
  early.unshift({ at_ns: 0, event: early[0].event });
  const pre = scanTransitions(
    new DomMirror(),
    early.slice(1),
    0,
    10_000 * MS,
    parseSelector("#submit"),
    parsePredicate({ kind: "propertyEquals", property: "disabled", equals: true }),
  );
  assertEquals(pre.initial, "elementMissing");
  assertEquals(pre.transitions[0], { at_ns: 500 * MS, from: "elementMissing", to: false });
});

Deno.test("transitions: the window starts mid-stream and ends at toNs; mouse moves and scrolls are not probed", () => {
  const { events } = story();
  const r = scan(
    events,
    "#flipper",
    { kind: "attributeEquals", name: "data-state", equals: "on" },
    2100,
    2200,
  );
  assertEquals(r.initial, false);
  assertEquals(r.transitions, [{ at_ns: 2150 * MS, from: false, to: true }]);
  assertEquals(r.probes, 2, "the value at fromNs and one group in the window");

  const whole = scan(events, "#flipper", { kind: "attributeEquals", name: "data-state", equals: "on" });
  // Groups after the snapshot: 5 mouse moves and a scroll (skipped), the text-only change at 1700 shares its
  // instant with an attribute change, so 1000, 1010, 1700, 2000, 2150, 2300, 2500, 3000 are probed.
  assertEquals(whole.probes, 1 + 8);
  assertEquals(whole.groups_skipped, 6);
  assertEquals(whole.events_scanned, events.length);
  assertEquals(whole.transitions.length, 3, "the cancelling pair at 2500 is one probe and no transition");
});

Deno.test("transitions: text-only changes are probed only by text-reading predicates", () => {
  const { events } = story();
  const text = scan(events, "#status", { kind: "textContains", text: "unavailable" });
  assertEquals(text.transitions, [{ at_ns: 1700 * MS, from: false, to: true }]);
  const attr = scan(events, "#status", { kind: "attributeExists", name: "hidden" }, 1600, 1800);
  assertEquals(attr.probes, 2, "the group at 1700 holds an attribute change, so it is probed");
});

Deno.test("transitions: the subject is resolved again when an attribute the selector reads changes", () => {
  const r = new Rec();
  const a = r.el("li", { class: "tab active" }, "Shipping");
  const b = r.el("li", { class: "tab" }, "Payment");
  const radio = r.el("input", { type: "radio", name: "pay", value: "card" });
  const events: TimedDomEvent[] = [{ at_ns: 0, event: r.full(r.page(r.el("ul", {}, a, b), radio)) }];
  events.push({
    at_ns: 10 * MS,
    event: r.mutation({ attributes: [{ id: a.id, attributes: { "data-x": "1" } }] }),
  });
  events.push({
    at_ns: 20 * MS,
    event: r.mutation({
      attributes: [{ id: a.id, attributes: { class: "tab" } }, {
        id: b.id,
        attributes: { class: "tab active" },
      }],
    }),
  });
  events.push({ at_ns: 30 * MS, event: r.input(radio.id, "card", true) });
  const tab = scan(events, "li.active", { kind: "textContains", text: "Payment" });
  assertEquals(tab.transitions, [{ at_ns: 20 * MS, from: false, to: true }]);
  assertEquals(tab.queries, 2, "the data-x change is not read by the selector: no new query");
  const checked = scan(events, "input:checked", { kind: "exists" });
  assertEquals(checked.transitions, [{ at_ns: 30 * MS, from: false, to: true }]);
});

Deno.test("transitions: 10,000 events over a 5,000-node document", () => {
  const r = new Rec();
  const rows = [];
  for (let i = 0; i < 1250; i++) {
    rows.push(r.el("div", { class: "row" }, r.el("span", {}, `item ${i}`), r.el("i")));
  }
  const page = r.page(r.el("main", {}, ...rows), r.el("button", { id: "go" }, "Go"));
  const go = idOf(page, "go");
  const events: TimedDomEvent[] = [{ at_ns: 0, event: r.full(page) }];
  for (let i = 1; i <= 10_000; i++) {
    const target = i % 100 === 0 ? go : rows[i % rows.length].id;
    const attributes: Record<string, string | null> = { "data-n": String(i) };
    if (target === go) attributes.disabled = i % 200 === 0 ? "" : null;
    events.push({ at_ns: i * MS, event: r.mutation({ attributes: [{ id: target, attributes }] }) });
  }
  const sel = parseSelector("button#go");
  const pred = parsePredicate({ kind: "propertyEquals", property: "disabled", equals: true });
  scanTransitions(new DomMirror(), events, 0, 20_000 * MS, sel, pred); // warm-up
  const before = process.cpuUsage();
  const t0 = performance.now();
  const res = scanTransitions(new DomMirror(), events, 0, 20_000 * MS, sel, pred);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(before);
  assertEquals(res.probes, 10_001);
  assertEquals(res.transitions.length, 99, "disabled on every 200th event, removed on the other 100th");
  assertEquals(res.transitions[0], { at_ns: 200 * MS, from: false, to: true });
  console.error(
    `scanTransitions over ${events.length} events (${res.probes} probes) on ~5,000 nodes: ` +
      `${wall.toFixed(1)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms CPU`,
  );
  assert((cpu.user + cpu.system) / 1000 < 2000, "well under 2 s of CPU");

  // Structural churn (a node added or removed by every event) under a selector that reads ancestors only:
  // each probe re-checks the touched nodes, not the document.
  const churnEvents: TimedDomEvent[] = [events[0]];
  let live: number | undefined;
  for (let i = 1; i <= 10_000; i++) {
    const row = rows[i % rows.length].id;
    let e: eventWithTime;
    if (live === undefined) {
      const added = r.el("b", { class: "new" }, "x");
      e = r.mutation({ adds: addsFor(row, added) });
      live = added.id;
    } else {
      e = r.mutation({ removes: [{ parentId: rows[(i - 1) % rows.length].id, id: live }] });
      live = undefined;
    }
    churnEvents.push({ at_ns: i * MS, event: e });
  }
  const c0 = process.cpuUsage();
  const cres = scanTransitions(
    new DomMirror(),
    churnEvents,
    0,
    20_000 * MS,
    parseSelector("main button#go"),
    pred,
  );
  const ccpu = process.cpuUsage(c0);
  assertEquals(cres.probes, 10_001);
  assertEquals(cres.full_queries, 1);
  console.error(
    `structural churn, 10,000 events (${cres.full_queries} document walk, ${
      cres.queries - 1
    } incremental): ` +
      `${((ccpu.user + ccpu.system) / 1000).toFixed(1)} ms CPU`,
  );
  const x0 = process.cpuUsage();
  scanTransitions(
    new DomMirror(),
    churnEvents.slice(0, 2_001),
    0,
    20_000 * MS,
    parseSelector("main button#go"),
    pred,
    {
      exhaustive: true,
    },
  );
  const xcpu = process.cpuUsage(x0);
  console.error(
    `the same, first 2,000 events, exhaustive: ${((xcpu.user + xcpu.system) / 1000).toFixed(1)} ms CPU`,
  );

  // Worst case: every event changes an attribute the selector reads, so every probe resolves it again.
  const churn = parseSelector("div.row.hot ~ button#go");
  const worst: TimedDomEvent[] = [events[0]];
  for (let i = 1; i <= 2_000; i++) {
    const row = rows[i % rows.length].id;
    worst.push({
      at_ns: i * MS,
      event: r.mutation({ attributes: [{ id: row, attributes: { class: i % 2 ? "row hot" : "row" } }] }),
    });
  }
  const w0 = process.cpuUsage();
  const wres = scanTransitions(
    new DomMirror(),
    worst,
    0,
    20_000 * MS,
    churn,
    parsePredicate({ kind: "exists" }),
  );
  const wcpu = process.cpuUsage(w0);
  assertEquals(wres.queries, 2_001);
  console.error(
    `worst case (selector re-resolved after each of 2,000 events): ${
      ((wcpu.user + wcpu.system) / 1000).toFixed(1)
    } ms CPU`,
  );
});

/** The committed real checkout recording on a session clock that starts at its first event. */
async function realCheckout() {
  const dir = new URL("../../../fixtures/recordings/", import.meta.url);
  const raw: eventWithTime[] = JSON.parse(await Deno.readTextFile(new URL("checkout.json", dir)));
  const truth: { truth: Array<{ what: string; at_epoch_ms: number }> } = JSON.parse(
    await Deno.readTextFile(new URL("checkout.truth.json", dir)),
  );
  const t0 = raw[0].timestamp;
  const events: TimedDomEvent[] = raw.map((event) => ({ at_ns: (event.timestamp - t0) * MS, event }));
  const when = (what: string) =>
    truth.truth.filter((t) => t.what.startsWith(what)).map((t) => (t.at_epoch_ms - t0) * MS);
  return { events, when };
}

function assertNear(actualNs: number, expectedNs: number, toleranceMs: number, what: string): void {
  const d = Math.abs(actualNs - expectedNs) / MS;
  assert(
    d <= toleranceMs,
    `${what}: ${actualNs / MS} ms vs the page's own ${expectedNs / MS} ms (${d.toFixed(1)} ms)`,
  );
}

Deno.test("transitions over the real checkout recording: each flip within 5 ms of the page's own time", async () => {
  const { events, when } = await realCheckout();
  const snapshotNs = events.find((e) => e.event.type === 2)?.at_ns ?? 0;
  assert(snapshotNs > 0, "the Meta event comes first: before the snapshot nothing exists");
  assertEquals(scan(events, "#submit", { kind: "exists" }, 0, 0).initial, false);
  const disabled = scanTransitions(
    new DomMirror(),
    events,
    snapshotNs,
    events[events.length - 1].at_ns,
    parseSelector("form#checkout button[type=submit]"),
    parsePredicate({ kind: "propertyEquals", property: "disabled", equals: true }),
  );
  assertEquals(disabled.initial, false);
  assertEquals(disabled.transitions.length, 1);
  assertNear(disabled.transitions[0].at_ns, when("submit_disabled")[0], 5, "submit disabled");

  const empty = scan(
    events,
    "select[name=province]",
    { kind: "optionCount", equals: 0 },
    snapshotNs / MS,
    1e9,
  );
  assertEquals(empty.transitions.length, 1);
  assertNear(empty.transitions[0].at_ns, when("options_removed")[0], 5, "options removed");

  // Two clicks on Flip, three flips each, with a checkpoint (new ids) between them: six transitions.
  const flips = scan(
    events,
    "#flipper",
    { kind: "attributeEquals", name: "data-state", equals: "on" },
    snapshotNs / MS,
    1e9,
  );
  const truthFlips = when("flipper_");
  assertEquals(flips.transitions.length, truthFlips.length);
  flips.transitions.forEach((t, i) => assertNear(t.at_ns, truthFlips[i], 5, `flip ${i + 1}`));
  assertEquals(flips.transitions.map((t) => t.to), [false, true, false, true, false, true]);
});

Deno.test("transitions over the real recording: a scan starting from the later checkpoint", async () => {
  const { events, when } = await realCheckout();
  const checkpoint = events.findLastIndex((e) => e.event.type === 2);
  assert(checkpoint > 3, "the recording holds a second full snapshot");
  const fromNs = events[checkpoint].at_ns + MS;
  const r = scanTransitions(
    new DomMirror(),
    events.slice(checkpoint - 1), // the Meta before it, then the checkpoint
    fromNs,
    1e12,
    parseSelector("#flipper"),
    parsePredicate({ kind: "attributeEquals", name: "data-state", equals: "on" }),
  );
  assertEquals(r.initial, false);
  assertEquals(r.transitions.length, 3);
  assertNear(r.transitions[0].at_ns, when("flipper_on")[1], 5, "first flip after the checkpoint");
});

Deno.test("transitions: visible measured by an async layout oracle, at each probed instant", async () => {
  const { events } = story();
  const asked: number[] = [];
  const r = await scanTransitionsAsync(
    new DomMirror(),
    events,
    0,
    10_000 * MS,
    parseSelector("#flipper"),
    parsePredicate({ kind: "visible" }),
    (_id, atNs) => {
      asked.push(atNs / MS);
      return Promise.resolve(atNs >= 2150 * MS);
    },
  );
  assertEquals(r.initial, false);
  assertEquals(r.transitions, [{ at_ns: 2150 * MS, from: false, to: true }]);
  assertEquals(r.basis, "layout");
  assert(asked.includes(200), "a scroll is probed when layout is measured");
  assert(!asked.includes(100), "mouse moves are not");
  const fallback = await scanTransitionsAsync(
    new DomMirror(),
    events,
    0,
    10_000 * MS,
    parseSelector("#flipper"),
    parsePredicate({ kind: "visible" }),
    () => Promise.resolve(undefined),
  );
  assertEquals([fallback.initial, fallback.transitions.length, fallback.basis], [
    true,
    0,
    "dom_approximation",
  ]);
});
