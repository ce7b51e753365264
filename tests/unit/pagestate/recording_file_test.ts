import { fileURLToPath } from "node:url";
import type { eventWithTime } from "@rrweb/types";
import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { jsonSyntaxProblem } from "../../../src/pagestate/json_syntax.ts";
import { parseRecording, readRecordingFile } from "../../../src/pagestate/recording_file.ts";
import { Rec } from "./rrweb_events.ts";

const SOURCE = { path: "/tmp/rec.json", name: "rec.json", bytes: 0 };
const CHECKOUT = fileURLToPath(new URL("../../../fixtures/recordings/checkout.json", import.meta.url));

function recording(): eventWithTime[] {
  const r = new Rec();
  const page = r.page(r.el("button", { id: "go" }, "Go"));
  return [
    r.meta("http://127.0.0.1/page.html", 800, 600),
    r.full(page),
    r.mutation({ attributes: [{ id: 5, attributes: { disabled: "" } }] }, 700),
  ];
}

function errorOf(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

async function errorOfAsync(fn: () => Promise<unknown>): Promise<ToolError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

Deno.test("recording file: a bare array and rrweb's { events } export both load, with span, meta and checkpoints", () => {
  const events = recording();
  const bare = parseRecording(JSON.stringify(events), SOURCE);
  assertEquals(bare.events.length, 3);
  assertEquals(bare.wrapped, false);
  assertEquals(bare.duration_ms, 701);
  assertEquals(bare.meta, { href: "http://127.0.0.1/page.html", width: 800, height: 600 });
  assertEquals(bare.checkpoints, 1);
  const wrapped = parseRecording(JSON.stringify({ events, version: 2 }), SOURCE);
  assertEquals(wrapped.wrapped, true);
  assertEquals(wrapped.first_timestamp, bare.first_timestamp);
});

Deno.test("recording file: a real rrweb recording (the committed checkout fixture) validates", async () => {
  const rec = await readRecordingFile(CHECKOUT);
  assert(rec.events.length > 10, String(rec.events.length));
  assert(rec.checkpoints >= 2, String(rec.checkpoints));
  assert(rec.meta.width > 0 && rec.meta.height > 0, JSON.stringify(rec.meta));
  assertEquals(rec.name, "checkout.json");
});

Deno.test("recording file: a truncated file is told apart from malformed JSON", () => {
  const text = JSON.stringify(recording());
  for (const cut of [text.length - 1, Math.floor(text.length / 2), 1, 30]) {
    const err = errorOf(() => parseRecording(text.slice(0, cut), SOURCE));
    assertEquals(err.code, "recording_truncated", `cut at ${cut}: ${err.message}`);
    assertMatch(err.message, /ends before its JSON is complete/);
  }
  assertEquals(errorOf(() => parseRecording("", SOURCE)).code, "recording_truncated");
  const broken = text.replace('"timestamp"', "timestamp");
  const err = errorOf(() => parseRecording(broken, SOURCE));
  assertEquals(err.code, "recording_malformed");
  assertMatch(err.message, /line 1, column \d+/);
  const lines = errorOf(() => parseRecording('[\n  {"type": 4,\n   "data": x}\n]', SOURCE));
  assertEquals(lines.code, "recording_malformed");
  assertMatch(lines.message, /line 3, column 12/);
  assertEquals(errorOf(() => parseRecording("[1,2] [", SOURCE)).code, "recording_malformed");
  assertEquals(errorOf(() => parseRecording('[{"a": 1]', SOURCE)).code, "recording_malformed");
});

Deno.test("json syntax: open structures, strings, literals and numbers at the end are truncation", () => {
  for (const t of ['[{"a": "b', "[tr", "[1.", "[-", '{"events": [', "[1e"]) {
    assertEquals(jsonSyntaxProblem(t).kind, "truncated", t);
  }
  for (const [t, at] of [["[1,,2]", 3], ["[nul1]", 1], ['{"a" 1}', 5], ["[1]x", 3]] as const) {
    const p = jsonSyntaxProblem(t);
    assert(p.kind === "malformed", t);
    assertEquals(p.position, at, t);
  }
});

Deno.test("recording file: wrongly typed events name the JSON path and the value", () => {
  const cases: Array<[(e: Record<string, unknown>[]) => unknown, RegExp]> = [
    [(e) => ((e[2].type = "mutation"), e), /^\[2\]\.type is a string \("mutation"\)/],
    [(e) => ((e[2].type = 42), e), /^\[2\]\.type is the number 42; expected one of rrweb's event types/],
    [(e) => ((e[1].timestamp = "soon"), e), /^\[1\]\.timestamp is a string/],
    [(e) => ((e[2].data = null), e), /^\[2\]\.data is null; expected an object/],
    [(e) => ((e[0].data = { href: "x", width: "wide", height: 1 }), e), /^\[0\]\.data\.width/],
    [(e) => e.map((x, i) => (i === 1 ? 7 : x)), /^\[1\] is the number 7; expected an rrweb event object/],
    [
      (e) => ({ events: e.map((x, i) => (i === 2 ? { ...x, timestamp: Infinity } : x)) }),
      /^events\[2\]\.timestamp/,
    ],
    [(e) => ({ frames: e }), /object without an "events" array \(its keys: frames\)/],
    [() => "hello", /holds a string/],
  ];
  for (const [mutate, pattern] of cases) {
    const events = recording() as unknown as Record<string, unknown>[];
    const err = errorOf(() => parseRecording(JSON.stringify(mutate(events)), SOURCE));
    assertEquals(err.code, "recording_malformed", err.message);
    assertMatch(err.message, pattern);
    assert(err.recovery, "a recovery");
  }
});

Deno.test("recording file: broken snapshot trees and mutation lists are found where they are", () => {
  const events = recording() as unknown as Array<{ data: Record<string, unknown> }>;
  const node = events[1].data.node as { childNodes: Array<{ childNodes: Array<Record<string, unknown>> }> };
  node.childNodes[1].childNodes[1].tagName = 3;
  const err = errorOf(() => parseRecording(JSON.stringify(events), SOURCE));
  assertEquals(err.message.split(" ")[0], "[1].data.node.childNodes[1].childNodes[1].tagName");
  const again = recording() as unknown as Array<{ data: Record<string, unknown> }>;
  again[2].data.adds = [{ parentId: 1, node: { id: 9, type: 3 } }];
  const add = errorOf(() => parseRecording(JSON.stringify(again), SOURCE));
  assertMatch(add.message, /^\[2\]\.data\.adds\[0\]\.node\.textContent is missing/);
  again[2].data.adds = "none";
  assertMatch(
    errorOf(() => parseRecording(JSON.stringify(again), SOURCE)).message,
    /^\[2\]\.data\.adds is a string/,
  );
});

Deno.test("recording file: out of order names the index and both timestamps", () => {
  const events = recording();
  events[2] = { ...events[2], timestamp: events[1].timestamp - 5 };
  const err = errorOf(() => parseRecording(JSON.stringify(events), SOURCE));
  assertEquals(err.code, "recording_out_of_order");
  assertMatch(
    err.message,
    new RegExp(
      `^\\[2\\]\\.timestamp ${events[2].timestamp} is before \\[1\\]\\.timestamp ${events[1].timestamp}`,
    ),
  );
  assertEquals(err.details?.index, 2);
});

Deno.test("recording file: no events, no Meta, or no FullSnapshot after the Meta is incomplete", () => {
  const events = recording();
  assertEquals(errorOf(() => parseRecording("[]", SOURCE)).code, "recording_incomplete");
  const noMeta = errorOf(() => parseRecording(JSON.stringify(events.slice(1)), SOURCE));
  assertEquals(noMeta.code, "recording_incomplete");
  assertMatch(noMeta.message, /no Meta event/);
  const noFull = errorOf(() => parseRecording(JSON.stringify([events[0], events[2]]), SOURCE));
  assertEquals(noFull.code, "recording_incomplete");
  assertMatch(noFull.message, /no FullSnapshot event \(type 2\) after its first Meta \(\[0\]\)/);
  // A snapshot before the Meta does not count.
  const before = errorOf(() =>
    parseRecording(JSON.stringify([{ ...events[1], timestamp: 1 }, events[0]]), SOURCE)
  );
  assertEquals(before.code, "recording_incomplete");
});

Deno.test("recording file: URLs, missing files, directories and oversized files are refused before reading", async () => {
  const url = await errorOfAsync(() => readRecordingFile("https://example.com/rec.json"));
  assertEquals(url.code, "recording_not_found");
  assertMatch(url.message, /is a URL/);
  assertEquals(
    (await errorOfAsync(() => readRecordingFile("file:///tmp/x.json"))).code,
    "recording_not_found",
  );
  const dir = await Deno.makeTempDir();
  try {
    const missing = await errorOfAsync(() => readRecordingFile(`${dir}/nope.json`));
    assertEquals(missing.code, "recording_not_found");
    assertMatch(missing.message, /No file at/);
    assertMatch((await errorOfAsync(() => readRecordingFile(dir))).message, /is a directory/);
    const big = `${dir}/big.json`;
    await Deno.writeTextFile(big, "");
    await Deno.truncate(big, 64 * 1024 * 1024 + 1);
    const large = await errorOfAsync(() => readRecordingFile(big));
    assertEquals(large.code, "recording_too_large");
    assertMatch(large.message, /is 67108865 bytes \(64\.0 MiB\), over the 67108864-byte \(64 MiB\) limit/);
    const bin = `${dir}/bin.json`;
    await Deno.writeFile(bin, new Uint8Array([0x5b, 0xff, 0xfe, 0x5d]));
    assertMatch((await errorOfAsync(() => readRecordingFile(bin))).message, /not UTF-8 text/);
    const ok = `${dir}/ok.json`;
    await Deno.writeTextFile(ok, `\ufeff${JSON.stringify(recording())}`);
    assertEquals((await readRecordingFile(ok)).events.length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
