import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { parseCapture } from "../../../src/scenario/capture_schema.ts";
import { compareCaptures } from "../../../src/scenario/compare.ts";
import { capture } from "./capture_factory.ts";

/** The capture as it reads back from a file or resource. */
function document(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(capture()));
}

type Key = string | number;

/** The object or array holding `path`'s last key. */
function parent(doc: unknown, path: readonly Key[]): Record<Key, unknown> {
  let at: unknown = doc;
  for (const key of path.slice(0, -1)) at = (at as Record<Key, unknown>)[key];
  assert(at !== null && typeof at === "object", `no container at ${path.join(".")}`);
  return at as Record<Key, unknown>;
}

function set(doc: unknown, path: readonly Key[], value: unknown): unknown {
  parent(doc, path)[path[path.length - 1]] = value;
  return doc;
}

function del(doc: unknown, path: readonly Key[]): unknown {
  delete parent(doc, path)[path[path.length - 1]];
  return doc;
}

Deno.test("parseCapture accepts a capture read back from JSON, and it compares unchanged with itself", () => {
  const doc = document();
  const parsed = parseCapture(doc, "before");
  assertEquals(parsed, doc as unknown as typeof parsed);
  assertEquals(compareCaptures(parsed, parseCapture(document(), "after")).overall_status, "unchanged");
});

Deno.test("parseCapture keeps extra scalar event fields and launch profile fields", () => {
  const doc = document();
  set(doc, ["events", "items", 0, "method"], "GET");
  set(doc, ["events", "items", 0, "header_names"], ["accept", "x-b"]);
  set(doc, ["events", "items", 0, "status"], 200);
  set(doc, ["events", "items", 0, "navigation"], true);
  set(doc, ["events", "items", 0, "failure"], null);
  set(doc, ["browser", "profile_dir"], "/tmp/krometrail-scenario-1");
  set(doc, ["browser", "profile_removed"], true);
  const parsed = parseCapture(doc, "after");
  assertEquals(parsed.events.items[0].header_names, ["accept", "x-b"]);
  assertEquals(parsed.browser.profile_removed, true);
});

Deno.test("parseCapture refuses what is not a scenario capture, naming the side and the path", () => {
  const cases: { name: string; mutate: (d: unknown) => unknown; path: string }[] = [
    { name: "not an object", mutate: () => "capture", path: "(document)" },
    { name: "another schema version", mutate: (d) => set(d, ["schema_version"], 2), path: "schema_version" },
    { name: "another capture kind", mutate: (d) => set(d, ["capture_kind"], "web"), path: "capture_kind" },
    { name: "unknown top-level field", mutate: (d) => set(d, ["extra"], 1), path: "(document)" },
    { name: "missing steps", mutate: (d) => del(d, ["steps"]), path: "steps" },
    { name: "no steps", mutate: (d) => set(d, ["steps"], []), path: "steps" },
    { name: "unknown step field", mutate: (d) => set(d, ["steps", 1, "note"], "x"), path: "steps[1]" },
    {
      name: "bad step status",
      mutate: (d) => set(d, ["steps", 2, "status"], "done"),
      path: "steps[2].status",
    },
    {
      name: "bad capture state",
      mutate: (d) => set(d, ["steps", 1, "artifacts", "dom"], { state: "partial" }),
      path: "steps[1].artifacts.dom.state",
    },
    {
      name: "missing without a reason",
      mutate: (d) => set(d, ["steps", 0, "artifacts", "url"], { state: "missing" }),
      path: "steps[0].artifacts.url.reason",
    },
    {
      name: "a screenshot digest that is not hex",
      mutate: (d) => set(d, ["steps", 0, "artifacts", "screenshot", "value", "sha256"], "abc"),
      path: "steps[0].artifacts.screenshot.value.sha256",
    },
    {
      name: "a hashed storage value without digest",
      mutate: (d) =>
        set(d, ["steps", 0, "artifacts", "storage", "value", "cookies", 0, "value_sha256"], null),
      path: "steps[0].artifacts.storage.value.cookies[0].value_sha256",
    },
    {
      name: "an event without a sequence",
      mutate: (d) => del(d, ["events", "items", 1, "sequence"]),
      path: "events.items[1].sequence",
    },
    {
      name: "an event of an unknown kind",
      mutate: (d) => set(d, ["events", "items", 0, "kind"], "paint"),
      path: "events.items[0].kind",
    },
    {
      name: "an event field holding an object",
      mutate: (d) => set(d, ["events", "items", 2, "detail"], { nested: true }),
      path: "events.items[2].detail",
    },
    {
      name: "an unknown capture plan kind",
      mutate: (d) => set(d, ["capture_plan", "after_each_step"], ["video"]),
      path: "capture_plan.after_each_step[0]",
    },
  ];
  for (const side of ["before", "after"] as const) {
    for (const c of cases) {
      let error: unknown;
      try {
        parseCapture(c.mutate(document()), side);
      } catch (e) {
        error = e;
      }
      assert(error instanceof ToolError, `${c.name}: expected a ToolError`);
      assertEquals(error.code, "invalid_capture", c.name);
      assertEquals(error.details?.side, side, c.name);
      assertEquals(error.details?.path, c.path, c.name);
      assertEquals(error.affected?.argument, side, c.name);
      assert(error.message.includes(`The ${side} capture`) && error.message.includes(c.path), error.message);
      assertEquals(error.retry, "never");
    }
  }
});

Deno.test("parseCapture reads a section cut out of a step as missing, so the step compares unknown", () => {
  const doc = document() as { steps: Array<{ step_id: string; artifacts: Record<string, unknown> }> };
  const at = doc.steps.findIndex((s) => (s.artifacts.dom as { state: string }).state === "captured");
  assert(at >= 0, "the factory captures a dom somewhere");
  del(doc, ["steps", at, "artifacts", "dom"]);
  const cut = parseCapture(doc, "after");
  assertEquals(cut.steps[at].artifacts.dom.state, "missing");
  const result = compareCaptures(parseCapture(document(), "before"), cut);
  assertEquals(result.steps[at].status, "unknown");
  assertEquals(result.overall_status, "unknown");
});
