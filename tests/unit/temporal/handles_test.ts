import { assert, assertEquals, assertMatch, assertThrows } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { RangeHandles } from "../../../src/temporal/handles.ts";
import type { ResolvedRange } from "../../../src/temporal/range.ts";

const MS = 1_000_000;

function range(sessionId = "s1"): ResolvedRange {
  return {
    resolved: true,
    session_id: sessionId,
    page_id: "p1",
    start_ns: 1000 * MS,
    end_ns: 2000 * MS,
    start_ms: 1000,
    end_ms: 2000,
    duration_ms: 1000,
    anchor: { kind: "interaction", id: "i-1", at_ns: 1150 * MS, at_ms: 1150 },
    requested: { start_ns: 900 * MS, end_ns: 2000 * MS },
    complete: false,
    warnings: [{ code: "partially_captured", edge: "start", message: "begins at 1000 ms" }],
    gaps: [{ page_id: "p1", kind: "stall", start_ns: 1500 * MS, end_ns: null, cause: null }],
  };
}

function invalid(handles: RangeHandles, handle: string): ToolError {
  const err = assertThrows(() => handles.get(handle));
  assert(err instanceof ToolError, `expected a ToolError, got ${err}`);
  assertEquals(err.code, "range_handle_invalid");
  assertEquals(err.retry, "never");
  assertEquals(err.affected, { argument: "range_handle" });
  assertMatch(err.recovery ?? "", /resolve_temporal_range/);
  return err;
}

Deno.test("RangeHandles: issue then get returns an equal range", () => {
  const handles = new RangeHandles();
  const h = handles.issue(range());
  assertMatch(h, /^rh-[0-9a-z]{6}-1$/);
  assertEquals(handles.get(h), range());
  const h2 = handles.issue(range("s2"));
  assertMatch(h2, /^rh-[0-9a-z]{6}-2$/);
  assertEquals(h2.slice(0, 9), h.slice(0, 9), "one process, one nonce");
  assertEquals(handles.get(h2).session_id, "s2");
});

Deno.test("RangeHandles: the returned range is an independent copy", () => {
  const handles = new RangeHandles();
  const h = handles.issue(range());
  const first = handles.get(h);
  first.start_ns = 0;
  first.warnings.push({ code: "open_gap", message: "mutated" });
  first.anchor.at_ns = 0;
  const gap = first.gaps[0];
  gap.end_ns = 1;
  const second = handles.get(h);
  assertEquals(second, range(), "a later get is unchanged");
  assert(first !== second, "each get returns a fresh object");
  second.duration_ms = 1;
  assertEquals(handles.get(h).duration_ms, 1000);
});

Deno.test("RangeHandles: mutating the issued object afterwards does not change the stored range", () => {
  const handles = new RangeHandles();
  const r = range();
  const h = handles.issue(r);
  r.end_ns = 99;
  r.warnings.length = 0;
  assertEquals(handles.get(h), range());
});

Deno.test("RangeHandles: a handle from another process is named as such", () => {
  const mine = new RangeHandles();
  const other = new RangeHandles();
  mine.issue(range());
  const foreign = other.issue(range());
  assert(foreign.slice(3, 9) !== mine.issue(range()).slice(3, 9), "two instances have different nonces");
  const err = invalid(mine, foreign);
  assertMatch(err.message, /was issued by another server process \(handles do not survive a restart\)/);
  assert(err.message.includes(JSON.stringify(foreign)), "the message quotes the handle");
});

Deno.test("RangeHandles: invalidateSession ends only that session's handles", () => {
  const handles = new RangeHandles();
  const a1 = handles.issue(range("a"));
  const b = handles.issue(range("b"));
  const a2 = handles.issue(range("a"));
  handles.invalidateSession("a");
  for (const h of [a1, a2]) {
    const err = invalid(handles, h);
    assertMatch(err.message, /was invalidated \(its session was deleted\) or never issued/);
  }
  assertEquals(handles.get(b).session_id, "b");
  // Invalidating an unknown session is harmless.
  handles.invalidateSession("zzz");
  assertEquals(handles.get(b).session_id, "b");
});

Deno.test("RangeHandles: a well-formed handle of this process that was never issued", () => {
  const handles = new RangeHandles();
  const h = handles.issue(range());
  const neverIssued = h.replace(/-1$/, "-999");
  const err = invalid(handles, neverIssued);
  assertMatch(err.message, /or never issued/);
  assert(!err.message.includes("another server process"));
});

Deno.test("RangeHandles: a malformed handle is not a range handle", () => {
  const handles = new RangeHandles();
  handles.issue(range());
  for (const bad of ["", "garbage", "rh-abc-1", "rh-ABCDEF-1", "rh-abcdef-", "rh-abcdef-1234567890"]) {
    const err = invalid(handles, bad);
    assertMatch(err.message, /is not a range handle\.$/, bad);
  }
  const long = "x".repeat(100);
  const err = invalid(handles, long);
  assert(err.message.includes(JSON.stringify("x".repeat(40))), "the quoted handle is cut to 40 characters");
  assert(!err.message.includes("x".repeat(41)));
});
