import { assert, assertEquals } from "../assert.ts";
import { deadlineFor } from "../../src/mcp/deadlines.ts";
import {
  e2e,
  errorCode,
  REPO_ROOT,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

/** Short enough to keep the test fast, long enough for a healthy call on a loaded 2-core box. */
const DEADLINE_MS = 2_500;
const STATE_FILE = `${Deno.makeTempDirSync({ prefix: "krometrail-stuck-" })}/state.json`;
/** The bound: every call on a stuck page returns within its deadline plus 2 s. */
const SLACK_MS = 2_000;
/** Calls that never wait on the page must answer at once, whatever the page does. */
const PROMPT_MS = 2_000;

interface Timed {
  tool: string;
  args: Record<string, unknown>;
  result: ToolResult;
  elapsed: number;
  deadline: number;
}

async function timed(server: ServerHandle, tool: string, args: Record<string, unknown>): Promise<Timed> {
  const started = performance.now();
  const result = await server.call(tool, args);
  return {
    tool,
    args,
    result,
    elapsed: performance.now() - started,
    deadline: deadlineFor(tool, args, DEADLINE_MS),
  };
}

/** Within its deadline + 2 s, and either a valid result or a structured error. */
function checkBounded(t: Timed): void {
  assert(
    t.elapsed <= t.deadline + SLACK_MS,
    `${t.tool} took ${Math.round(t.elapsed)} ms, over its deadline of ${t.deadline} ms + ${SLACK_MS} ms`,
  );
  if (!t.result.isError) return;
  const error = structured(t.result).error as Record<string, unknown>;
  for (const key of ["code", "message", "retry"]) assert(typeof error[key] === "string", `${t.tool}: ${key}`);
  assert(error.code !== "internal_error", `${t.tool}: ${error.message}`);
}

function checkUnresponsive(t: Timed, pageId: string): void {
  assertEquals(errorCode(t.result), "page_unresponsive", `${t.tool}: ${textOf(t.result).slice(0, 300)}`);
  const error = structured(t.result).error as {
    retry: string;
    recovery: string;
    affected: { page_id: string };
    details: { deadline_ms: number; tool: string };
  };
  assertEquals(error.retry, "after_recovery");
  assertEquals(error.affected.page_id, pageId);
  assertEquals(error.details.deadline_ms, t.deadline);
  assertEquals(error.details.tool, t.tool);
  for (const recovery of ["navigate_page", "close_page"]) {
    assert(error.recovery.includes(recovery), error.recovery);
  }
}

/**
 * Every catalogue tool that takes page_id, called on a page whose main thread is stuck. Navigation
 * and page closing are the recoveries and run afterwards, one by one.
 */
function stuckCalls(pageId: string): Record<string, Record<string, unknown>> {
  const page_id = pageId;
  return {
    snapshot_page: { page_id },
    query_page: { page_id, locator: { role: "button", name: "Freeze" } },
    take_screenshot: { page_id },
    observe_live: { page_id },
    inspect_page: { page_id },
    evaluate_page: { page_id, expression: "1 + 1", timeout_ms: 500 },
    fill: { page_id, selector: "#note", value: "typed" },
    press_keys: { page_id, keys: "Enter" },
    hover: { page_id, selector: "#freeze" },
    scroll: { page_id, dy: 200 },
    drag: { page_id, selector: "#freeze", to: { x: 300, y: 300 } },
    select_option: { page_id, selector: "#size", label: "Large" },
    upload_files: { page_id, selector: "#upload", paths: [`${REPO_ROOT}fixtures/site/files/report.csv`] },
    set_viewport: { page_id, width: 800, height: 600 },
    wait: { page_id, text: "never shown", timeout_ms: 500 },
    handle_dialog: { page_id, action: "accept" },
    read_clipboard: { page_id },
    write_clipboard: { page_id, text: "copied" },
    activate_page: { page_id },
    select_page: { page_id },
    list_source_frames: { page_id },
    query_browser_events: { page_id },
    // Page state answers from the recording, never from the stuck renderer.
    read_dom_at: { page_id },
    diff_dom: { page_id, from: { at_ms: 0 }, to: { at_ms: 1e6 } },
    find_element: { page_id, text: "Freeze" },
    bisect: { page_id, selector: "#freeze", predicate: { kind: "exists" } },
    measure_layout: { page_id, selectors: ["#freeze"] },
    annotate: { page_id, label: "stuck here" },
    read_markers: { page_id },
    // DevTools parity: browser-side state answers; what needs the renderer fails in time.
    fill_form: { page_id, fields: [{ selector: "#note", value: "typed" }] },
    get_network_request: { page_id, request_id: "no-such-request" },
    emulate: { page_id, cpu_slowdown: 2 },
    cookies: { page_id, action: "list" },
    web_storage: { page_id, action: "list" },
    save_storage_state: { page_id, path: STATE_FILE },
    load_storage_state: { page_id, path: `${STATE_FILE}.missing` },
    route_requests: { page_id, url: "**/never-requested", action: "abort" },
    measure_performance: { page_id, mode: "start" },
    save_pdf: { page_id },
    // The question goes to the viewer; the harness client declares no elicitation, so it is pending at once.
    ask_human: { page_id, question: "Did the page freeze?", choices: ["yes", "no"] },
    open_viewer: { page_id },
  };
}

/** Run on their own: the click that freezes the page, and the recoveries (navigation, closing). */
const SEPARATE = new Set(["click", "navigate_page", "reload_page", "go_back", "go_forward", "close_page"]);

Deno.test(
  "stuck page: every tool returns within its deadline + 2 s, and the browser stays usable",
  e2e,
  async () => {
    await withServer(async (server, site) => {
      const listed = await server.client.listTools();
      const pageTools = listed.tools.filter((t) => "page_id" in ((t.inputSchema.properties ?? {}) as object))
        .map((t) => t.name);
      const calls = stuckCalls("p1");
      for (const name of pageTools) {
        assert(
          name in calls || SEPARATE.has(name),
          `${name} takes page_id; add it to the stuck-page calls`,
        );
      }

      const loaded = await server.call("navigate_page", { url: `${site.origin}/stuck.html` });
      assert(!loaded.isError, textOf(loaded));
      const all: Timed[] = [];
      // The click completes and its handler starts the busy loop from a timer, while the click's result
      // is observed: the interaction comes back degraded, with its record, saying the page is stuck.
      const click = await timed(server, "click", { page_id: "p1", selector: "#freeze-soon" });
      all.push(click);
      checkBounded(click);
      assert(!click.result.isError, textOf(click.result));
      const clicked = structured(click.result) as {
        status: string;
        interaction_id: string;
        warnings: string[];
      };
      assertEquals(clicked.status, "degraded");
      assert(clicked.warnings.some((w) => w.startsWith("page_unresponsive:")), clicked.warnings.join("\n"));

      // Everything at once: nothing may queue behind a stuck call, and browser_status answers meanwhile.
      const stuck = Object.entries(calls).map(([tool, args]) => timed(server, tool, args));
      const status = await timed(server, "browser_status", {});
      const pages = await timed(server, "list_pages", {});
      const batch = await timed(server, "batch", {
        steps: [{ tool: "snapshot_page", args: {} }],
        deadline_ms: 1_000,
      });
      const results = [...await Promise.all(stuck), batch];
      for (const quick of [status, pages]) {
        assert(!quick.result.isError, textOf(quick.result));
        assert(
          quick.elapsed < PROMPT_MS,
          `${quick.tool} took ${Math.round(quick.elapsed)} ms beside stuck calls`,
        );
      }
      for (const t of results) checkBounded(t);
      all.push(...results);
      // These need the renderer; inspect_page may answer from browser-side state (a valid result).
      const verdicts = ["snapshot_page", "query_page", "take_screenshot", "fill"];
      for (const tool of verdicts) {
        checkUnresponsive(results.find((t) => t.tool === tool) as Timed, "p1");
      }
      // Each of those verdicts is on the timeline too: an "unresponsive" browser event on p1 naming its tool
      // (events reach the index through the ingest worker, so they are polled for, bounded).
      let hangs: Array<{ page_id: string | null; level: string | null; data: { tool?: string } | null }> = [];
      for (const until = performance.now() + 10_000; performance.now() < until;) {
        const hung = await server.call("query_browser_events", {
          kinds: ["unresponsive"],
          page_id: "p1",
          max_events: 100,
        });
        assert(!hung.isError, textOf(hung));
        hangs = structured(hung).events as typeof hangs;
        if (verdicts.every((tool) => hangs.some((e) => e.data?.tool === tool))) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const tool of verdicts) {
        const event = hangs.find((e) => e.data?.tool === tool);
        assert(event, `an unresponsive event for ${tool}: ${JSON.stringify(hangs).slice(0, 600)}`);
        assertEquals(event.page_id, "p1");
        assertEquals(event.level, "warning");
      }

      // Navigating away to about:blank brings the page back (another renderer takes over).
      const away = await timed(server, "navigate_page", {
        page_id: "p1",
        url: "about:blank",
        timeout_ms: 5_000,
      });
      checkBounded(away);
      assert(!away.result.isError, `navigating away recovers the page: ${textOf(away.result)}`);
      all.push(away);
      const back = await timed(server, "snapshot_page", { page_id: "p1" });
      assert(!back.result.isError, textOf(back.result));

      // Frozen again, now by a click whose own handler loops: the click itself never completes.
      const reloaded = await server.call("navigate_page", {
        page_id: "p1",
        url: `${site.origin}/stuck.html`,
      });
      assert(!reloaded.isError, textOf(reloaded));
      const frozen = await timed(server, "click", { page_id: "p1", selector: "#freeze" });
      checkBounded(frozen);
      checkUnresponsive(frozen, "p1");
      all.push(frozen);
      // A reload and history moves wait on the stuck renderer and fail in time; a new page works;
      // close_page recovers at once.
      for (const tool of ["reload_page", "go_back", "go_forward"]) {
        const t = await timed(server, tool, { page_id: "p1", timeout_ms: 1_000 });
        checkBounded(t);
        assert(t.result.isError, `${tool}: ${textOf(t.result)}`);
        all.push(t);
      }
      const created = await timed(server, "create_page", { url: `${site.origin}/index.html` });
      assert(!created.result.isError, textOf(created.result));
      const fresh = await timed(server, "snapshot_page", {});
      assert(!fresh.result.isError, textOf(fresh.result));
      const closed = await timed(server, "close_page", { page_id: "p1" });
      assert(!closed.result.isError, textOf(closed.result));
      assert(closed.elapsed < PROMPT_MS, `close_page took ${Math.round(closed.elapsed)} ms`);
      const after = await server.call("list_pages", {});
      assert(!textOf(after).includes("p1"), textOf(after));
      const final = await timed(server, "browser_status", {});
      assert(!final.result.isError && final.elapsed < PROMPT_MS, textOf(final.result));

      const slowest = all.reduce((a, b) => (b.elapsed - b.deadline > a.elapsed - a.deadline ? b : a));
      const rows = all.map((t) =>
        `${t.tool} ${Math.round(t.elapsed)}/${t.deadline} ms ${t.result.isError ? errorCode(t.result) : "ok"}`
      );
      console.error(
        `stuck page: ${all.length} calls; slowest over its deadline: ${slowest.tool} ${
          Math.round(slowest.elapsed)
        } ms vs its deadline of ${slowest.deadline} ms\n  ${rows.join("\n  ")}`,
      );
    }, { browser: {}, env: { KROMETRAIL_TOOL_DEADLINE_MS: String(DEADLINE_MS) } });
  },
);
