import { assert, assertEquals } from "../assert.ts";
import { e2e, structured, withServer } from "./harness.ts";

interface Event {
  event_id: number;
  session_time_ms: number;
  kind: string;
  level: string | null;
  text: string | null;
  interaction_id: string | null;
  data: Record<string, unknown> | null;
}

Deno.test({
  name:
    "browser events: console, exceptions, requests and failures are recorded, sanitized and tied to the interaction",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/events.html` });
      const clicked = structured(await server.call("click", { selector: "#go" }));
      const interaction = String(clicked.interaction_id);
      await new Promise((r) => setTimeout(r, 1_000));

      const all = structured(await server.call("query_browser_events", { max_events: 200 }));
      const events = all.events as Event[];
      const kinds = new Set(events.map((e) => e.kind));
      for (
        const k of ["navigation", "lifecycle", "console", "exception", "request", "request_failed", "target"]
      ) {
        assert(kinds.has(k), `${k} recorded: ${[...kinds]}`);
      }
      const text = JSON.stringify(events);
      for (
        const secret of [
          "hunter2-secret",
          "abcd1234efgh5678ijkl",
          "/home/alice",
          "s3cr3t",
          "abc123",
          "/admin",
        ]
      ) {
        assertEquals(text.includes(secret), false, `"${secret}" never reaches the index`);
      }
      assert(!/cookie|authorization|user-agent/i.test(text), "no headers are recorded");

      // The click handler logs twice before its first await; Chrome's timestamps tie both to the click.
      const clickConsole = events.filter((e) => e.kind === "console" && e.interaction_id === interaction);
      assertEquals(clickConsole.length, 2, `console tied to the click: ${JSON.stringify(events)}`);
      // The interaction's window runs through its whole lifecycle, so both are in it even when a loaded
      // renderer acknowledges the click (the dispatch stamp) long after the handler ran.
      const byInteraction = structured(
        await server.call("query_browser_events", { interaction_id: interaction }),
      );
      const span = byInteraction.range as { start_ms: number; end_ms: number; anchor: { at_ms: number } };
      const inWindow = new Set((byInteraction.events as Event[]).map((e) => e.event_id));
      assert(
        clickConsole.every((e) => inWindow.has(e.event_id)),
        `console tied to the click, in its window: at ${
          clickConsole.map((e) => e.session_time_ms)
        } ms, window ${span.start_ms}–${span.end_ms} ms, dispatch ${span.anchor.at_ms} ms`,
      );
      const missing = events.find((e) => e.kind === "request" && e.data?.status === 404);
      assert(missing, "the 404 is recorded with its status");
      assertEquals(missing.level, "error");
      const failed = events.find((e) => e.kind === "request_failed");
      assert(failed && String(failed.data?.error).startsWith("net::"), JSON.stringify(failed));

      const consoleOnly = structured(
        await server.call("query_browser_events", { kinds: ["console"], max_events: 1 }),
      );
      assertEquals((consoleOnly.events as Event[]).length, 1);
      assertEquals(consoleOnly.total_event_count, 2);
      assertEquals(consoleOnly.omitted_event_count, 1);
      assertEquals(consoleOnly.next_offset, 1);
    }, { browser: {} }),
});
