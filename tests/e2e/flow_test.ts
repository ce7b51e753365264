import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, refOf, structured, textOf, type ToolResult, withServer } from "./harness.ts";

const headless = { browser: { headless: true } };

interface Satisfied {
  status: string;
  elapsed_ms: number;
  timeout_ms: number;
  condition: Record<string, unknown>;
  observed: Record<string, unknown>;
}

function satisfied(result: ToolResult, what: string): Satisfied {
  assert(!result.isError, `${what}: ${textOf(result).slice(0, 400)}`);
  const s = structured(result) as unknown as Satisfied;
  assertEquals(s.status, "satisfied", what);
  return s;
}

async function evaluate(
  server: { call: (t: string, a: Record<string, unknown>) => Promise<ToolResult> },
  e: string,
) {
  return structured(await server.call("evaluate_page", { expression: e })).value;
}

Deno.test({
  name: "wait: time, text, element states, semantic locator, navigation, condition, network quiet, timeout",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/waits.html` });

      // Nothing has started yet, so the text cannot appear: a structured, retry-safe timeout.
      const timedOut = await server.call("wait", { text: "Data loaded", timeout_ms: 500 });
      assertEquals(timedOut.isError, true);
      assertEquals(errorCode(timedOut), "wait_timeout");
      const err = structured(timedOut).error as {
        retry: string;
        message: string;
        details: { condition: string; elapsed_ms: number; timeout_ms: number; last_observed: unknown };
      };
      assertEquals(err.retry, "safe");
      assertEquals(err.details.condition, "text");
      assertEquals(err.details.timeout_ms, 500);
      assert(err.details.elapsed_ms >= 500, `elapsed ${err.details.elapsed_ms}`);
      assertEquals(err.details.last_observed, { text_present: false });
      assertMatch(err.message, /"Data loaded" to appear/);

      const slept = satisfied(await server.call("wait", { time_ms: 200 }), "time");
      assert(slept.elapsed_ms >= 200, `slept ${slept.elapsed_ms}`);

      // The heading is not there yet: absent is satisfied at once; the outcome says no_match.
      const absent = satisfied(
        await server.call("wait", { locator: { role: "heading", name: "Report ready" }, present: false }),
        "semantic absent",
      );
      assertEquals(absent.observed.outcome, "no_match");

      const snap = structured(await server.call("snapshot_page"));
      const agreeRef = refOf(snap, "checkbox", "Agree");
      await server.call("click", { selector: "#start" });

      const text = satisfied(await server.call("wait", { text: "data   LOADED" }), "text");
      assertEquals(text.observed, { text_present: true });

      // Non-actionable content (a heading) in the full tree: count reported, never a ref.
      const heading = await server.call("wait", { locator: { role: "heading", name: "Report ready" } });
      const present = satisfied(heading, "semantic present");
      assertEquals(present.observed.outcome, "match");
      assertEquals(present.observed.match_count, 1);
      assertEquals(present.observed.source, "accessibility_tree");
      assert(!JSON.stringify(heading.structuredContent).includes('"ref"'), "a semantic wait carries no ref");

      const enabled = satisfied(
        await server.call("wait", { selector: "#proceed", state: "enabled" }),
        "enabled",
      );
      assertEquals(enabled.observed.enabled, true);
      const checked = satisfied(await server.call("wait", { ref: agreeRef, state: "checked" }), "checked");
      assertEquals(checked.observed.checked, true);
      const detached = satisfied(
        await server.call("wait", { selector: "#spinner", state: "detached" }),
        "detached",
      );
      assertEquals(detached.observed.attached, false);
      satisfied(await server.call("wait", { text: "Loading spinner", gone: true }), "text gone");
      const noSpinner = satisfied(
        await server.call("wait", { locator: { text: "Loading spinner" }, present: false }),
        "dom locator absent",
      );
      assertEquals(noSpinner.observed, {
        outcome: "no_match",
        match_count: 0,
        saturated: false,
        source: "dom",
      });

      const condition = satisfied(await server.call("wait", { condition: "window.ticks >= 5" }), "condition");
      assertEquals(condition.observed.value_preview, "true");
      assertEquals(await evaluate(server, "window.ticks"), 5);

      // Requests 200 ms apart keep the network busy: quiet for 600 ms only after the last one.
      await server.call("evaluate_page", { expression: "void fetchChain(4, 200)" });
      const quiet = satisfied(await server.call("wait", { network_quiet_ms: 600 }), "network quiet");
      assert((quiet.observed.requests_seen as number) >= 3, JSON.stringify(quiet.observed));
      assertEquals(await evaluate(server, "window.fetchesDone"), 4);

      // A navigation committed after the wait began (same-document pushState).
      await server.call("evaluate_page", { expression: "navigateLater(500)" });
      const nav = satisfied(await server.call("wait", { url_includes: "view=done" }), "navigation");
      assertMatch(String(nav.observed.url), /\?view=done$/);
      assertEquals(nav.observed.same_document, true);
      // Only navigations after the call count: the earlier one does not satisfy a new wait.
      const noNav = await server.call("wait", { navigation: true, timeout_ms: 300 });
      assertEquals(errorCode(noNav), "wait_timeout");

      // Malformed waits fail before anything runs.
      assertEquals(errorCode(await server.call("wait", { text: "a", time_ms: 5 })), "invalid_arguments");
      assertEquals(errorCode(await server.call("wait", { selector: "#x" })), "invalid_arguments");
      const uncheckable = await server.call("wait", { selector: "#start", state: "checked" });
      assertEquals(errorCode(uncheckable), "not_checkable");
    }, headless),
});

interface Step {
  index: number;
  tool: string;
  status: string;
  elapsed_ms: number;
  interaction_id?: string;
  error?: { code: string; message: string };
  screenshot?: { uri: string };
}

interface BatchResult {
  status: string;
  batch_id: string;
  steps: Step[];
  error?: { code: string; message: string; details: { step_index: number; tool: string; cause: string } };
  observation?: { interaction_id: string; operation: string };
  observation_step?: number;
}

Deno.test({
  name: "batch: per-step anchors, stop at a failing step, continue_on_error, pre-validation, deadline",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const url = `${site.origin}/index.html`;
      const ok = await server.call("batch", {
        steps: [
          { tool: "navigate_page", args: { url } },
          { tool: "fill", args: { locator: { label: "Name" }, value: "Ada" } },
          { tool: "click", args: { selector: "#reveal" } },
          { tool: "press_keys", args: { keys: "Enter", locator: { label: "Name" } } },
        ],
      });
      assert(!ok.isError, textOf(ok).slice(0, 500));
      const b = structured(ok) as unknown as BatchResult;
      assertEquals(b.status, "ok");
      assertEquals(b.steps.map((s) => [s.index, s.tool, s.status]), [
        [0, "navigate_page", "ok"],
        [1, "fill", "ok"],
        [2, "click", "ok"],
        [3, "press_keys", "ok"],
      ]);
      const anchors = b.steps.map((s) => s.interaction_id ?? "");
      for (const a of anchors) assertMatch(a, /^s\d+-i\d+$/);
      assertEquals(new Set(anchors).size, 4, "each step has its own anchor");
      assert(b.steps.every((s) => s.screenshot === undefined), "no per-step screenshots unless asked");
      assertEquals(b.observation_step, 3);
      assertEquals(b.observation?.operation, "press_keys");
      assertEquals(b.observation?.interaction_id, anchors[3]);
      assertEquals(await evaluate(server, "document.getElementById('status').textContent"), "Hello, Ada!");
      assertEquals(await evaluate(server, "document.getElementById('details').hidden"), false);
      // The index records each step's interaction under the batch (query tools flush the writer).
      await server.call("query_browser_events", {});
      const instances = [...Deno.readDirSync(join(server.dataDir, "instances"))];
      const db = new DatabaseSync(join(server.dataDir, "instances", instances[0].name, "index.sqlite"), {
        readOnly: true,
      });
      try {
        const rows = db.prepare(
          `SELECT id, batch_id FROM interactions WHERE id IN (${anchors.map(() => "?").join(",")})`,
        ).all(...anchors) as Array<{ id: string; batch_id: string | null }>;
        assertEquals(rows.length, 4);
        assert(rows.every((r) => r.batch_id === b.batch_id), JSON.stringify(rows));
      } finally {
        db.close();
      }

      // Step 2 acts on a ref the new document of step 1 made stale: step 1 is kept, 3 skipped.
      const staleRef = refOf(structured(await server.call("snapshot_page")), "button", "Hide details");
      const failed = await server.call("batch", {
        steps: [
          { tool: "navigate_page", args: { url } },
          { tool: "click", args: { ref: staleRef } },
          { tool: "fill", args: { locator: { label: "Name" }, value: "never" } },
        ],
      });
      assertEquals(failed.isError, true);
      const f = structured(failed) as unknown as BatchResult;
      assertEquals(f.status, "failed");
      assertEquals(f.steps.map((s) => s.status), ["ok", "failed", "skipped"]);
      assertMatch(f.steps[0].interaction_id ?? "", /^s\d+-i\d+$/);
      assertEquals(f.steps[1].error?.code, "stale_ref");
      assertEquals(f.error?.code, "stale_ref");
      assertEquals(f.error?.details.step_index, 1);
      assertEquals(f.error?.details.tool, "click");
      assertMatch(textOf(failed), /steps\[1\] \(click\).*stale/);
      assertEquals(f.observation_step, 0, "the last live observation is step 0's");
      assertEquals(await evaluate(server, "document.getElementById('name').value"), "");

      // continue_on_error runs past a missing element; per-step screenshots on request.
      const cont = await server.call("batch", {
        steps: [
          { tool: "click", args: { selector: "#missing" } },
          { tool: "click", args: { selector: "#reveal" } },
          { tool: "wait", args: { text: "Details are visible" } },
        ],
        continue_on_error: true,
        screenshots: true,
      });
      const c = structured(cont) as unknown as BatchResult;
      assertEquals(c.status, "degraded");
      assertEquals(c.steps.map((s) => s.status), ["failed", "ok", "ok"]);
      assertEquals(c.steps[0].error?.code, "selector_no_match");
      assertEquals(c.error?.details.step_index, 0);
      assertMatch(c.steps[1].screenshot?.uri ?? "", /^krometrail:\/\/evidence\/screenshots\//);
      assertEquals(c.steps[2].interaction_id, undefined, "a wait records no interaction");
      assertEquals(c.observation_step, 1);

      // An invalid step is rejected before anything runs: the details stay visible.
      const invalid = await server.call("batch", {
        steps: [
          { tool: "click", args: { selector: "#reveal" } },
          { tool: "fill", args: { locator: { label: "Name" }, value: 42 } },
        ],
      });
      assertEquals(errorCode(invalid), "invalid_arguments");
      const inv = structured(invalid).error as {
        details: { step_index: number; tool: string };
        message: string;
      };
      assertEquals(inv.details.step_index, 1);
      assertEquals(inv.details.tool, "fill");
      assertMatch(inv.message, /steps\[1\] \(fill\)/);
      assertEquals(await evaluate(server, "document.getElementById('details').hidden"), false);
      for (const tool of ["start_browser", "batch", "stop_browser"]) {
        const r = await server.call("batch", { steps: [{ tool, args: {} }] });
        assertEquals(errorCode(r), "invalid_arguments", `${tool} is not a batch step`);
      }

      // Deadline before dispatch: a failed step without an interaction record.
      const pre = structured(
        await server.call("batch", { steps: [{ tool: "wait", args: { time_ms: 3_000 } }], deadline_ms: 300 }),
      ) as unknown as BatchResult;
      assertEquals(pre.status, "timed_out");
      assertEquals(pre.steps[0].status, "failed");
      assertEquals(pre.steps[0].interaction_id, undefined);
      assertEquals(pre.error?.code, "batch_deadline_exceeded");

      // Deadline after dispatch: the click blocks the renderer past the deadline; its anchor is kept.
      await server.call("navigate_page", { url: `${site.origin}/waits.html` });
      const late = await server.call("batch", {
        steps: [
          { tool: "click", args: { selector: "#busy" } },
          { tool: "click", args: { selector: "#start" } },
        ],
        deadline_ms: 1_000,
      });
      assertEquals(late.isError, true);
      const l = structured(late) as unknown as BatchResult;
      assertEquals(l.status, "timed_out");
      assertEquals(l.steps.map((s) => s.status), ["timed_out", "skipped"]);
      assertMatch(l.steps[0].interaction_id ?? "", /^s\d+-i\d+$/);
      assertEquals(l.error?.code, "batch_deadline_exceeded");
      assertEquals(l.error?.details.step_index, 0);
      assertEquals(await evaluate(server, "window.ticks"), 0, "the skipped step never ran");
    }, headless),
});
