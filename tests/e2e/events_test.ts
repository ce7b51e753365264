import { assert, assertEquals } from "../assert.ts";
import { e2e, structured, withServer } from "./harness.ts";

interface Event {
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

      const byInteraction = structured(
        await server.call("query_browser_events", { interaction_id: interaction }),
      )
        .events as Event[];
      assert(
        byInteraction.some((e) => e.kind === "console" && e.interaction_id === interaction),
        "console tied to the click",
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
