import { assert, assertEquals } from "../assert.ts";
import {
  e2e,
  errorCode,
  REPO_ROOT,
  type ServerHandle,
  sharedServerChecks,
  startServer,
  structured,
  textOf,
} from "./harness.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";

async function pageTitles(server: ServerHandle, site: StaticServer): Promise<void> {
  const nav = structured(await server.call("navigate_page", { url: `${site.origin}/noop.html` }));
  assertEquals((nav.page as { title: string }).title, "No-op clicks");
  assert(textOf(await server.call("list_pages", {})).includes('"No-op clicks"'));
  const plain = structured(await server.call("navigate_page", { url: `${site.origin}/untitled.html` }));
  assertEquals(
    (plain.page as { title: string }).title,
    "",
    "a document without a title is not titled by its URL",
  );
}

async function httpErrorNavigation(server: ServerHandle, site: StaticServer): Promise<void> {
  for (const [path, status] of [["/__status/500", 500], ["/missing.html", 404]] as const) {
    const result = await server.call("navigate_page", { url: `${site.origin}${path}` });
    const out = structured(result);
    assertEquals(out.status, "ok", "the document still loaded");
    assertEquals((out.navigation as { http_status?: number }).http_status, status);
    const note = (out.postconditions as { note?: string }).note ?? "";
    assert(note.includes(`HTTP ${status}`), note);
    assert(textOf(result).includes(`HTTP ${status}`), textOf(result));
  }
  const fine = structured(await server.call("navigate_page", { url: `${site.origin}/noop.html` }));
  assertEquals((fine.navigation as { http_status?: number }).http_status, undefined);
  assertEquals((fine.postconditions as { note?: string }).note, undefined);
}

async function evaluateTimeouts(server: ServerHandle, site: StaticServer): Promise<void> {
  await server.call("navigate_page", { url: `${site.origin}/noop.html` });
  const pending = await server.call("evaluate_page", {
    expression: "new Promise(() => {})",
    timeout_ms: 300,
  });
  assertEquals(errorCode(pending), "evaluation_timeout", textOf(pending));
  assert(textOf(pending).includes("300 ms"), textOf(pending));
  assert(!/dialog/i.test(textOf(pending)), `no dialog is open: ${textOf(pending)}`);

  const busy = await server.call("evaluate_page", { expression: "for (;;) {}", timeout_ms: 300 });
  assertEquals(errorCode(busy), "evaluation_timeout", textOf(busy));

  const blocked = await server.call("evaluate_page", {
    expression: "setTimeout(() => alert('hold on'), 0); new Promise(() => {})",
    timeout_ms: 1_000,
  });
  assertEquals(errorCode(blocked), "evaluation_timeout", textOf(blocked));
  assert(textOf(blocked).includes("alert dialog"), textOf(blocked));
  await server.call("handle_dialog", { action: "accept" });
  const after = structured(await server.call("evaluate_page", { expression: "1 + 1" }));
  assertEquals(after.value, 2);
}

Deno.test({
  name: "a headed launch on Linux without a display says to pass headless: true or set KROMETRAIL_HEADLESS=1",
  ignore: Deno.build.os !== "linux",
  ...e2e,
  fn: async () => {
    const server = await startServer({ env: { DISPLAY: "", WAYLAND_DISPLAY: "", KROMETRAIL_HEADLESS: "" } });
    try {
      const result = await server.call("start_browser", { temporary: true, headless: false });
      assertEquals(errorCode(result), "display_unavailable", textOf(result));
      assert(textOf(result).includes("headless: true"), textOf(result));
      assert(textOf(result).includes("KROMETRAIL_HEADLESS=1"), textOf(result));
      assertEquals(structured(await server.call("browser_status", {})).running, false);
    } finally {
      await server.close();
    }
  },
});

Deno.test({
  name: "deno task demo writes its folder where the command was run and names it",
  ...e2e,
  fn: async () => {
    const here = await Deno.makeTempDir({ prefix: "krometrail-demo-cwd-" });
    try {
      const run = await new Deno.Command(Deno.execPath(), {
        args: ["task", "--config", `${REPO_ROOT}deno.json`, "demo"],
        cwd: here,
        // As from a user's shell: `deno task test` exports INIT_CWD, and a nested `deno task` keeps it.
        clearEnv: true,
        env: { ...withoutInitCwd(Deno.env.toObject()), KROMETRAIL_DATA_DIR: `${here}/data`, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(run.stdout);
      assertEquals(run.code, 0, `${stdout}\n${new TextDecoder().decode(run.stderr)}`);
      const made = [...Deno.readDirSync(here)].filter((e) =>
        e.isDirectory && e.name.startsWith("krometrail-demo-")
      );
      assertEquals(made.length, 1, `one demo folder in ${here}: ${stdout}`);
      const folder = `${await Deno.realPath(here)}/${made[0].name}`;
      assert(stdout.includes(folder), `the output names ${folder}:\n${stdout}`);
      assert(Deno.statSync(`${folder}/report.md`).isFile);
      assert(
        ![...Deno.readDirSync(REPO_ROOT)].some((e) => e.name === made[0].name),
        "nothing was written into the checkout",
      );
    } finally {
      await Deno.remove(here, { recursive: true }).catch(() => {});
    }
  },
});

function withoutInitCwd(env: Record<string, string>): Record<string, string> {
  const { INIT_CWD: _, ...rest } = env;
  return rest;
}

interface EventRow {
  kind: string;
  interaction_id: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

async function allEvents(server: ServerHandle, kinds: string[]): Promise<EventRow[]> {
  const out: EventRow[] = [];
  for (;;) {
    const page = structured(
      await server.call("query_browser_events", { kinds, max_events: 200, offset: out.length }),
    );
    out.push(...(page.events as EventRow[]));
    if (page.next_offset === undefined) return out;
  }
}

async function eventAttribution(server: ServerHandle, site: StaticServer): Promise<void> {
  const nav = String(
    structured(await server.call("navigate_page", { url: `${site.origin}/attribution.html` }))
      .interaction_id,
  );
  const clicks = new Map<string, number>();
  for (let i = 0; i < 25; i++) {
    const out = structured(await server.call("click", { selector: "#go" }));
    clicks.set(String(out.interaction_id), Date.parse(String(out.started_at)));
  }
  // Every fetch leaves a row, even one whose body nobody reads (Chrome never reports it finished). A
  // fetch that fails (a reset under load) leaves a request_failed row: still the click's.
  let fetches: EventRow[] = [];
  for (let i = 0; i < 200 && fetches.length < clicks.size + 1; i++) {
    fetches = (await allEvents(server, ["request", "request_failed"]))
      .filter((e) => e.data?.resource_type === "Fetch");
    if (fetches.length < clicks.size + 1) await new Promise((r) => setTimeout(r, 100));
  }
  const rowless = [nav, ...clicks.keys()].filter((id) => !fetches.some((e) => e.interaction_id === id));
  assertEquals(
    fetches.length,
    clicks.size + 1,
    `interactions without a fetch row: ${rowless.join(", ")}; ` +
      JSON.stringify(fetches.map((e) => [e.kind, e.interaction_id, e.data?.request_id, e.data?.status])),
  );
  assertEquals(
    fetches.filter((e) => e.interaction_id === nav).length,
    1,
    "the load's fetch is the navigation's",
  );
  for (const id of clicks.keys()) {
    assertEquals(fetches.filter((e) => e.interaction_id === id).length, 1, `one fetch for ${id}`);
  }
  // The page logs its own clock every few ms. Chrome stamps a console call between the `at` its text
  // carries and the `previous returned` of the next tick; only that upper bound proves a tick came
  // before a click began (a renderer preempted under load stamps the call well after its `at`).
  const ticks = (await allEvents(server, ["console"])).filter((e) => e.text?.startsWith("tick "));
  assert(ticks.length > 100, `ticks recorded: ${ticks.length}`);
  const returned = new Map<number, number>();
  for (const t of ticks) {
    const [, n, prev] = t.text?.match(/^tick (\d+) at \d+ previous returned (\d+)/) ?? [];
    if (n !== undefined) returned.set(Number(n) - 1, Number(prev));
  }
  let checked = 0;
  for (const t of ticks) {
    const began = t.interaction_id ? clicks.get(t.interaction_id) : undefined;
    const by = returned.get(Number(t.text?.match(/^tick (\d+)/)?.[1]));
    if (began === undefined || by === undefined) continue;
    checked++;
    assert(
      by >= began - 1,
      `${t.text} (returned by ${by}) is attributed to ${t.interaction_id}, begun at ${began}`,
    );
  }
  assert(checked > 0, "some ticks were the clicks'");
}

const BROWSER = { headless: true };

/**
 * The checks that need only a headless browser share one server process (its start is most of what each
 * would otherwise cost under load), each with a browser (and session) of its own.
 */
Deno.test({
  name: "truths",
  ...e2e,
  fn: (t) =>
    sharedServerChecks(t, [
      [
        "page.title is the document title, in action results and list_pages; an untitled document has none",
        pageTitles,
      ],
      ["a navigation that ends in an HTTP error reports the status and a note", httpErrorNavigation],
      [
        "evaluate_page honours timeout_ms, and its timeout blames a dialog only when one is open",
        evaluateTimeouts,
      ],
      [
        "events are attributed by when they happened: a fetch begun by a navigation is the navigation's, a click's fetch the click's, and nothing from before a click began is the click's",
        eventAttribution,
      ],
    ], BROWSER),
});
