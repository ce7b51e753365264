import { assert, assertEquals, assertMatch, assertThrows } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  type Coverage,
  type GapSpan,
  interactionRequest,
  MAX_RANGE_MS,
  pointRequest,
  type RangeAnchor,
  resolveInstant,
  type ResolveOptions,
  resolveWindow,
} from "../../../src/temporal/range.ts";

const MS = 1_000_000;
const PARTIAL: ResolveOptions = { allow_partial: true, require_complete: false };
const STRICT: ResolveOptions = { allow_partial: true, require_complete: true };
const NO_PARTIAL: ResolveOptions = { allow_partial: false, require_complete: false };

function coverage(over: Partial<Coverage> = {}): Coverage {
  return { page_id: "p1", start_ns: 1000 * MS, end_ns: 5000 * MS, live: false, gaps: [], ...over };
}

function anchor(atMs: number): RangeAnchor {
  return { kind: "session_time", at_ns: atMs * MS };
}

function req(startMs: number, endMs: number) {
  return { start_ns: startMs * MS, end_ns: endMs * MS };
}

function gap(startMs: number, endMs: number | null, kind = "stall"): GapSpan {
  return {
    page_id: "p1",
    kind,
    start_ns: startMs * MS,
    end_ns: endMs === null ? null : endMs * MS,
    cause: null,
  };
}

function toolError(fn: () => unknown): ToolError {
  const err = assertThrows(fn);
  assert(err instanceof ToolError, `expected a ToolError, got ${err}`);
  return err;
}

Deno.test("resolveWindow: a request inside coverage resolves exactly, complete, without warnings", () => {
  const r = resolveWindow("s1", anchor(2500), req(2000, 3000), coverage(), PARTIAL);
  assertEquals(r.resolved, true);
  assertEquals(r.session_id, "s1");
  assertEquals(r.page_id, "p1");
  assertEquals([r.start_ns, r.end_ns], [2000 * MS, 3000 * MS]);
  assertEquals([r.start_ms, r.end_ms, r.duration_ms], [2000, 3000, 1000]);
  assertEquals(r.anchor, { kind: "session_time", at_ns: 2500 * MS, at_ms: 2500 });
  assertEquals(r.requested, { start_ns: 2000 * MS, end_ns: 3000 * MS });
  assertEquals(r.complete, true);
  assertEquals(r.warnings, []);
  assertEquals(r.gaps, []);
});

Deno.test("resolveWindow: a request exactly equal to coverage is complete", () => {
  const r = resolveWindow("s1", anchor(1000), req(1000, 5000), coverage(), STRICT);
  assertEquals([r.start_ms, r.end_ms, r.complete], [1000, 5000, true]);
  assertEquals(r.warnings, []);
});

Deno.test("resolveWindow: a start before capture resolves to the intersection with a start-edge warning", () => {
  const r = resolveWindow("s1", anchor(1500), req(500, 2000), coverage(), PARTIAL);
  assertEquals([r.start_ms, r.end_ms, r.duration_ms], [1000, 2000, 1000]);
  assertEquals(r.requested, { start_ns: 500 * MS, end_ns: 2000 * MS });
  assertEquals(r.complete, false);
  assertEquals(r.warnings.map((w) => [w.code, w.edge]), [["partially_captured", "start"]]);
  assertMatch(r.warnings[0].message, /begins at 1000 ms; the requested start 500 ms was not captured/);
});

Deno.test("resolveWindow: an end after a finished stream resolves to the intersection with an end-edge warning", () => {
  const r = resolveWindow("s1", anchor(4500), req(4000, 6000), coverage(), PARTIAL);
  assertEquals([r.start_ms, r.end_ms, r.duration_ms], [4000, 5000, 1000]);
  assertEquals(r.complete, false);
  assertEquals(r.warnings.map((w) => [w.code, w.edge]), [["partially_captured", "end"]]);
  assertMatch(r.warnings[0].message, /ended at 5000 ms; the requested end 6000 ms was not captured/);
});

Deno.test("resolveWindow: a request wider than coverage on both sides warns about both edges, start first", () => {
  const r = resolveWindow("s1", anchor(3000), req(0, 9000), coverage(), PARTIAL);
  assertEquals([r.start_ms, r.end_ms], [1000, 5000]);
  assertEquals(r.warnings.map((w) => [w.code, w.edge]), [
    ["partially_captured", "start"],
    ["partially_captured", "end"],
  ]);
});

Deno.test("resolveWindow: a live session with a known now says a future end has not happened yet", () => {
  const live = coverage({ live: true, end_ns: 5000 * MS, now_ns: 5000 * MS });
  const r = resolveWindow("s1", anchor(4500), req(4000, 5300), live, PARTIAL);
  assertEquals([r.start_ms, r.end_ms], [4000, 5000]);
  assertEquals(r.warnings.map((w) => [w.code, w.edge]), [
    ["partially_captured", "end"],
    ["requested_end_not_yet_elapsed", "end"],
  ]);
  assertMatch(r.warnings[0].message, /requested end 5300 ms is after the latest retained instant 5000 ms/);
  assertMatch(r.warnings[1].message, /300 ms in the future/);
});

Deno.test("resolveWindow: requested_end_not_yet_elapsed needs live, a known now, and an end after now", () => {
  const codes = (c: Coverage, endMs: number) =>
    resolveWindow("s1", anchor(4500), req(4000, endMs), c, PARTIAL).warnings.map((w) => w.code);
  // live but now unknown
  assertEquals(codes(coverage({ live: true }), 5300), ["partially_captured"]);
  // now known but not live
  assertEquals(codes(coverage({ live: false, now_ns: 5000 * MS }), 5300), ["partially_captured"]);
  // live, now known, the end past retained capture but not after now
  assertEquals(codes(coverage({ live: true, now_ns: 6000 * MS }), 5500), ["partially_captured"]);
  // live, now known, the end exactly now: not in the future
  assertEquals(codes(coverage({ live: true, now_ns: 5300 * MS }), 5300), ["partially_captured"]);
  // and it is emitted when all hold
  assertEquals(codes(coverage({ live: true, now_ns: 5200 * MS }), 5300), [
    "partially_captured",
    "requested_end_not_yet_elapsed",
  ]);
});

Deno.test("resolveWindow: overlapping gaps are returned and warned about; others are left out", () => {
  const c = coverage({
    gaps: [
      gap(200, 900, "before"),
      gap(2100, 2200, "stall"),
      gap(2500, 2600, "hidden"),
      gap(4000, 4100, "after"),
    ],
  });
  const r = resolveWindow("s1", anchor(2000), req(2000, 3000), c, PARTIAL);
  assertEquals(r.gaps.map((g) => g.kind), ["stall", "hidden"]);
  assertEquals(r.complete, false);
  assertEquals(r.warnings.map((w) => w.code), ["capture_gaps"]);
  assertMatch(r.warnings[0].message, /^2 known capture gaps \(stall, hidden\) inside the range/);
  assertEquals([r.start_ms, r.end_ms], [2000, 3000], "gaps do not shrink the range");
});

Deno.test("resolveWindow: one gap is named in the singular, repeated kinds once", () => {
  const one = resolveWindow(
    "s1",
    anchor(2000),
    req(2000, 3000),
    coverage({ gaps: [gap(2100, 2200)] }),
    PARTIAL,
  );
  assertMatch(one.warnings[0].message, /^1 known capture gap \(stall\) inside/);
  const two = resolveWindow(
    "s1",
    anchor(2000),
    req(2000, 3000),
    coverage({ gaps: [gap(2100, 2200), gap(2300, 2400)] }),
    PARTIAL,
  );
  assertMatch(two.warnings[0].message, /^2 known capture gaps \(stall\) inside/);
});

Deno.test("resolveWindow: an open gap extends to the coverage end", () => {
  // Opened before the range and never closed: it covers the whole range.
  const before = resolveWindow(
    "s1",
    anchor(3000),
    req(3000, 4000),
    coverage({ gaps: [gap(1500, null)] }),
    PARTIAL,
  );
  assertEquals(before.gaps.length, 1);
  assertEquals(before.gaps[0].end_ns, null);
  assertEquals(before.warnings.map((w) => w.code), ["capture_gaps"]);
  assertEquals(before.complete, false);
  // Opened after the range ends: not inside it.
  const after = resolveWindow(
    "s1",
    anchor(2000),
    req(2000, 3000),
    coverage({ gaps: [gap(3500, null)] }),
    PARTIAL,
  );
  assertEquals(after.gaps, []);
  assertEquals(after.complete, true);
  // A closed gap with the same start that ended before the range is not inside it either.
  const closed = resolveWindow(
    "s1",
    anchor(3000),
    req(3000, 4000),
    coverage({ gaps: [gap(1500, 2000)] }),
    PARTIAL,
  );
  assertEquals(closed.gaps, []);
});

Deno.test("resolveWindow: require_complete refuses an incomplete range with range_incomplete", () => {
  const start = toolError(() => resolveWindow("s1", anchor(1500), req(500, 2000), coverage(), STRICT));
  assertEquals(start.code, "range_incomplete");
  assertEquals(start.retry, "never");
  assertEquals(start.affected, { session_id: "s1", page_id: "p1" });
  assertMatch(start.message, /500–2000 ms is not completely captured: its start precedes capture\.$/);
  assertMatch(start.recovery ?? "", /Drop require_complete/);

  const both = toolError(() =>
    resolveWindow("s1", anchor(1500), req(500, 6000), coverage({ gaps: [gap(2000, 2100)] }), STRICT)
  );
  assertEquals(both.code, "range_incomplete");
  assertMatch(
    both.message,
    /its start precedes capture, its end is past retained capture, it contains 1 capture gap\(s\)\.$/,
  );

  const gapOnly = toolError(() =>
    resolveWindow("s1", anchor(2000), req(2000, 3000), coverage({ gaps: [gap(2500, 2600)] }), STRICT)
  );
  assertEquals(gapOnly.code, "range_incomplete");
  assertMatch(gapOnly.message, /: it contains 1 capture gap\(s\)\.$/);
});

Deno.test("resolveWindow: allow_partial false refuses an incomplete range and points at allow_partial", () => {
  const err = toolError(() => resolveWindow("s1", anchor(4500), req(4000, 6000), coverage(), NO_PARTIAL));
  assertEquals(err.code, "range_incomplete");
  assertMatch(err.message, /its end is past retained capture/);
  assertMatch(err.recovery ?? "", /allow_partial: true/);
  // A complete range passes under both strict settings.
  assertEquals(resolveWindow("s1", anchor(2000), req(2000, 3000), coverage(), NO_PARTIAL).complete, true);
  assertEquals(resolveWindow("s1", anchor(2000), req(2000, 3000), coverage(), STRICT).complete, true);
});

Deno.test("resolveWindow: a range disjoint from coverage fails with range_not_captured", () => {
  for (const [s, e] of [[0, 500], [6000, 7000]]) {
    const err = toolError(() => resolveWindow("s1", anchor(s), req(s, e), coverage(), PARTIAL));
    assertEquals(err.code, "range_not_captured", `${s}–${e}`);
    assertEquals(err.retry, "never");
    assertEquals(err.affected, { session_id: "s1", page_id: "p1" });
    assertMatch(err.message, new RegExp(`Nothing of ${s}–${e} ms was captured for page p1`));
    assertMatch(err.message, /retained capture spans 1000–5000 ms/);
  }
  // Disjointness wins over require_complete's wording.
  const strict = toolError(() => resolveWindow("s1", anchor(0), req(0, 500), coverage(), STRICT));
  assertEquals(strict.code, "range_not_captured");
});

Deno.test("resolveWindow: a single-instant coverage inside the request resolves to that instant", () => {
  const c = coverage({ start_ns: 1000 * MS, end_ns: 1000 * MS });
  const r = resolveWindow("s1", anchor(1000), req(500, 1500), c, PARTIAL);
  assertEquals([r.start_ms, r.end_ms, r.duration_ms], [1000, 1000, 0]);
  assertEquals(r.warnings.map((w) => w.edge), ["start", "end"]);
  assertEquals(r.complete, false);
});

Deno.test("resolveWindow: an end at or before the start fails with invalid_range", () => {
  for (const [s, e] of [[2000, 2000], [3000, 2000]]) {
    const err = toolError(() => resolveWindow("s1", anchor(s), req(s, e), coverage(), PARTIAL));
    assertEquals(err.code, "invalid_range");
    assertEquals(err.retry, "never");
    assertMatch(err.message, new RegExp(`ends \\(${e} ms\\) at or before it starts \\(${s} ms\\)`));
  }
  // Checked before coverage: an inverted request outside coverage is still invalid_range.
  assertEquals(
    toolError(() => resolveWindow("s1", anchor(0), req(9000, 8000), coverage(), PARTIAL)).code,
    "invalid_range",
  );
});

Deno.test("resolveWindow: an over-long range fails with resource_limit_exceeded naming value and limit", () => {
  const c = coverage({ start_ns: 0, end_ns: 2 * MAX_RANGE_MS * MS });
  const err = toolError(() => resolveWindow("s1", anchor(0), req(0, MAX_RANGE_MS + 1), c, PARTIAL));
  assertEquals(err.code, "resource_limit_exceeded");
  assertEquals(err.retry, "never");
  assertMatch(err.message, /range duration is 1800001 ms, over the limit of 1800000 ms/);
  assertEquals(err.details, { subject: "range duration ms", actual: 1800001, limit: 1800000 });
  // Exactly the limit is allowed.
  const ok = resolveWindow("s1", anchor(0), req(0, MAX_RANGE_MS), c, PARTIAL);
  assertEquals(ok.duration_ms, MAX_RANGE_MS);
  assertEquals(ok.complete, true);
});

Deno.test("interactionRequest: defaults are 150 ms before dispatch to 1000 ms after observation", () => {
  const at = { anchor_ns: 10_000 * MS, end_ns: 10_400 * MS };
  assertEquals(interactionRequest(at, undefined, undefined), { start_ns: 9_850 * MS, end_ns: 11_400 * MS });
  // An explicit after is measured from the dispatch anchor, not the observation end.
  assertEquals(interactionRequest(at, 500, 2000), { start_ns: 9_500 * MS, end_ns: 12_000 * MS });
  assertEquals(interactionRequest(at, 0, 0), { start_ns: 10_000 * MS, end_ns: 10_000 * MS });
});

Deno.test("pointRequest: defaults are 150 ms before and 2000 ms after the point", () => {
  assertEquals(pointRequest(10_000 * MS, undefined, undefined), {
    start_ns: 9_850 * MS,
    end_ns: 12_000 * MS,
  });
  assertEquals(pointRequest(10_000 * MS, 1000, 300), { start_ns: 9_000 * MS, end_ns: 10_300 * MS });
});

Deno.test("resolveWindow: a range ahead of a live session says the current session time", () => {
  const live = coverage({ live: true, now_ns: 5000 * MS });
  const err = toolError(() => resolveWindow("s1", anchor(9000), req(9000, 9500), live, PARTIAL));
  assertEquals(err.code, "range_not_captured");
  assertEquals(err.retry, "after_recovery");
  assertMatch(
    err.message,
    /has not happened yet\. The current session time is 5000 ms; the request starts 4000 ms after it/,
  );
  assertMatch(err.recovery ?? "", /up to 5000 ms \(now\), or wait 4000 ms/);
  // A past disjoint range of a live session is not "future", but still names the present.
  const past = toolError(() => resolveWindow("s1", anchor(0), req(0, 500), live, PARTIAL));
  assertEquals(past.retry, "never");
  assertMatch(past.message, /retained capture spans 1000–5000 ms; the current session time is 5000 ms\./);
});

Deno.test("resolveInstant: an instant inside coverage is the range [at, at], marked instant, complete", () => {
  const r = resolveInstant(
    "s1",
    { kind: "interaction", id: "i3", at_ns: 2000 * MS },
    2120 * MS,
    coverage(),
    PARTIAL,
  );
  assertEquals([r.start_ns, r.end_ns, r.duration_ms], [2120 * MS, 2120 * MS, 0]);
  assertEquals([r.start_ms, r.end_ms], [2120, 2120]);
  assertEquals(r.instant, true);
  assertEquals(r.anchor, { kind: "interaction", id: "i3", at_ns: 2000 * MS, at_ms: 2000 });
  assertEquals(r.requested, { start_ns: 2120 * MS, end_ns: 2120 * MS });
  assertEquals([r.complete, r.warnings, r.gaps], [true, [], []]);
  // Both ends of coverage are instants of it.
  assertEquals(resolveInstant("s1", anchor(1000), 1000 * MS, coverage(), STRICT).start_ms, 1000);
  assertEquals(resolveInstant("s1", anchor(5000), 5000 * MS, coverage(), STRICT).start_ms, 5000);
});

Deno.test("resolveInstant: before the first frame or after the stream ended is not captured", () => {
  for (const at of [999, 5001]) {
    const err = toolError(() => resolveInstant("s1", anchor(at), at * MS, coverage(), PARTIAL));
    assertEquals(err.code, "range_not_captured", `${at}`);
    assertEquals(err.retry, "never");
    assertMatch(err.message, new RegExp(`Nothing of the instant ${at} ms was captured for page p1`));
    assertMatch(err.recovery ?? "", /from 1000 to 5000 ms/);
  }
});

Deno.test("resolveInstant: a future instant of a live session says the current session time", () => {
  const live = coverage({ live: true, end_ns: 5000 * MS, now_ns: 5000 * MS });
  const err = toolError(() => resolveInstant("s1", anchor(5250), 5250 * MS, live, PARTIAL));
  assertEquals(err.code, "range_not_captured");
  assertEquals(err.retry, "after_recovery");
  assertMatch(err.message, /The current session time is 5000 ms; the request starts 250 ms after it/);
});

Deno.test("resolveInstant: an instant in a gap warns that the screen may have changed unseen", () => {
  const c = coverage({ gaps: [gap(2000, 2200, "hidden"), gap(3000, null, "stall")] });
  const r = resolveInstant("s1", anchor(2100), 2100 * MS, c, PARTIAL);
  assertEquals(r.complete, false);
  assertEquals(r.gaps.map((g) => g.kind), ["hidden"]);
  assertEquals(r.warnings.map((w) => w.code), ["capture_gaps"]);
  assertMatch(r.warnings[0].message, /1 known capture gap \(hidden\) at the instant/);
  // An open gap reaches the end of coverage.
  assertEquals(resolveInstant("s1", anchor(4000), 4000 * MS, c, PARTIAL).gaps.map((g) => g.kind), ["stall"]);
  assertEquals(resolveInstant("s1", anchor(2500), 2500 * MS, c, STRICT).complete, true);
  for (const opts of [STRICT, NO_PARTIAL]) {
    const err = toolError(() => resolveInstant("s1", anchor(2100), 2100 * MS, c, opts));
    assertEquals(err.code, "range_incomplete");
    assertMatch(err.message, /falls in 1 capture gap/);
  }
});
