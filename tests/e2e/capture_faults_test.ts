import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, structured, textOf, withServer } from "./harness.ts";

interface Capture {
  frames_received: number;
  frames_dropped: number;
  frames_stored: number;
  gaps: number;
  streams: Array<{ page_id: string; terminal?: string }>;
  persistence_failure?: { operation: string; recoverability: string; recovery: string };
}

const faults = (plan: unknown) => ({ KROMETRAIL_TEST_FAULTS: JSON.stringify(plan) });
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Server = Parameters<Parameters<typeof withServer>[0]>[0];

async function capture(server: Server): Promise<Capture> {
  return structured(await server.call("browser_status", { detail: "expanded" })).capture as Capture;
}

/**
 * Probes until `done` holds or a generous cap passes, and returns the last probe: the assertions after it
 * judge that value as they judged the state after a fixed wait, without waiting longer than the machine
 * needs (nor failing when a loaded one needs longer).
 */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, capMs = 30_000): Promise<T> {
  const deadline = Date.now() + capMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await wait(100);
    value = await probe();
  }
  return value;
}

async function gapsOf(server: Server): Promise<Array<{ kind: string; cause: string }>> {
  return structured(await server.call("list_source_frames", {})).gaps as Array<
    { kind: string; cause: string }
  >;
}

Deno.test({
  name: "faults: a full ingestion queue records a gap while capture and control continue",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/flash.html` });
      const first = await until(() => capture(server), (c) => c.frames_dropped > 0);
      const later = await until(() => capture(server), (c) => c.frames_received > first.frames_received);
      assert(later.frames_received > first.frames_received, "frames keep arriving and being acknowledged");
      assert(later.frames_dropped > 0 && later.frames_stored === 0, JSON.stringify(later));
      assertEquals(later.streams[0].terminal, undefined, "a full queue never ends the stream");
      const gaps = await until(() => gapsOf(server), (g) => g.length >= 1);
      assert(gaps.length >= 1 && gaps.every((g) => g.kind === "queue_full"), JSON.stringify(gaps));
      assertEquals(structured(await server.call("evaluate_page", { expression: "1 + 1" })).value, 2);
    }, { browser: {}, env: faults({ queue_capacity: 0 }) }),
});

Deno.test({
  name: "faults: a segment write failure is writer-terminal and says to restart the process",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/flash.html` });
      const status = await until(() => capture(server), (c) => c.persistence_failure !== undefined);
      assertEquals(status.persistence_failure?.operation, "write");
      assertEquals(status.persistence_failure?.recoverability, "writer_terminal");
      assertMatch(status.persistence_failure?.recovery ?? "", /Restart the krometrail MCP process/);
      assert(status.frames_stored >= 1, "frames before the failure were stored");
      const gaps = await until(() => gapsOf(server), (g) => g.some((g) => g.kind === "persistence"));
      assert(gaps.some((g) => g.kind === "persistence"), JSON.stringify(gaps));
      // Control is independent of retained capture.
      assertEquals(structured(await server.call("click", { x: 5, y: 5 })).status, "ok");
      const stopped = await server.call("stop_browser");
      assertMatch(textOf(stopped), /writer_terminal/);
    }, { browser: {}, env: faults({ segment_fault: { operation: "write", after: 5 } }) }),
});

Deno.test({
  name: "faults: a directory-sync failure after sealing is writer-usable and says to start a new session",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/flash.html` });
      // A few frames in the open segment first.
      await until(() => capture(server), (c) => c.frames_stored >= 3);
      // Stopping seals the open segment: the rename lands, the directory sync fails.
      const stopped = structured(await server.call("stop_browser"));
      const failure = (stopped.capture as Capture).persistence_failure;
      assertEquals([failure?.operation, failure?.recoverability], ["dir_sync", "writer_usable"]);
      assertMatch(failure?.recovery ?? "", /new browser session/);
      const flushed = stopped.flushed as { frames: number };
      const listed = structured(await server.call("list_source_frames", { max_frames: 1 }));
      assertEquals(listed.total_frame_count, flushed.frames, "sealed frames stay authoritative and listed");
    }, { browser: {}, env: faults({ segment_fault: { operation: "dir_sync", after: 1 } }) }),
});

Deno.test({
  name: "faults: a missed acknowledgement deadline ends the stream with exactly one gap; control still works",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/flash.html` });
      const status = await until(
        () => capture(server),
        (c) => c.streams.find((s) => s.page_id === "p1")?.terminal !== undefined,
      );
      assertEquals(status.streams.find((s) => s.page_id === "p1")?.terminal, "ack_deadline_exceeded");
      const gaps = await until(() => gapsOf(server), (g) => g.some((g) => g.kind === "ack_deadline"));
      assertEquals(gaps.filter((g) => g.kind === "ack_deadline").length, 1, JSON.stringify(gaps));
      const received = status.frames_received;
      await wait(1_000);
      assertEquals(
        (await capture(server)).frames_received,
        received,
        "a terminal stream takes no more frames",
      );
      assertEquals(structured(await server.call("click", { selector: "body" })).status, "ok");
    }, { browser: {}, env: faults({ ack_deadline_ms: 0 }) }),
});

Deno.test({
  name: "budget: capture pauses at the configured disk budget with a gap naming used and limit bytes",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      // Loaded without navigate_page: its observation screenshot counts against the same 60 KB share, and
      // under load it could land before any frame and take the room frames are being measured against.
      await server.call("evaluate_page", {
        expression: `location.href = ${JSON.stringify(`${site.origin}/flash.html`)}`,
      });
      const status = await until(
        async () =>
          structured(await server.call("browser_status", { detail: "expanded" })).capture as
            & Capture
            & {
              frames_over_budget: number;
              bytes_stored: number;
              budget?: { used_bytes: number; budget_bytes: number; paused: boolean };
            },
        (c) => c.frames_over_budget > 0 && c.budget?.paused === true,
      );
      assert(status.frames_stored > 0, "frames below the budget were stored");
      assert(status.frames_over_budget > 0, JSON.stringify(status));
      assertEquals(status.budget?.paused, true);
      assertEquals(status.budget?.budget_bytes, 60_000);
      assert(status.bytes_stored <= 60_000, `stored ${status.bytes_stored} bytes within the budget`);
      const gaps = await until(() => gapsOf(server), (g) => g.some((g) => g.kind === "budget"));
      const budgetGap = gaps.find((g) => g.kind === "budget");
      assert(budgetGap && /of 60000 bytes/.test(budgetGap.cause), JSON.stringify(gaps));
      // Control does not depend on retained capture.
      assertEquals(structured(await server.call("click", { x: 3, y: 3 })).status, "ok");
    }, { browser: {}, env: { KROMETRAIL_DISK_BUDGET_BYTES: "60000" } }),
});
