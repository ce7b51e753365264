/**
 * The soak's acknowledgement floor, measured beside krometrail: a bare CDP client (the same socket
 * code krometrail uses, and nothing else: no ingest worker, no disk, no analysis) attaches to the very
 * page krometrail records, in the same browser, starts its own screencast with krometrail's settings and
 * acknowledges every frame at once, for the whole run. Both streams are then acknowledged by the same
 * Chromium, under the same machine load, at the same moments, which the floor of ack_floor.ts (its own
 * Chromium, alone, after the soak) is not: on a shared machine the load of the minute after a soak says
 * little about the minutes of it, and a 10-minute run's p99 was compared with a minute that had a
 * different load. Each ack is timed like krometrail's own (ScreencastStream.onFrame): from the frame
 * event's delivery to the listener to the ack's reply.
 */
import { join } from "node:path";
import { CdpConnection } from "../../src/browser/cdp.ts";
import { JPEG_QUALITY } from "../../src/capture/screencast.ts";
import type { AckSample } from "./ack_floor.ts";

export { type AckSample, floorOf } from "./ack_floor.ts";

export interface AckFloorProbe {
  /** Acks so far; the list grows while the probe runs. */
  readonly samples: readonly AckSample[];
  /** Stops the probe's screencast, detaches and returns every ack. */
  stop(): Promise<AckSample[]>;
}

/** The bare client: its own CDP connection to the browser at `browserWsUrl`, on the page at `pageUrl`. */
export async function attachAckFloor(browserWsUrl: string, pageUrl: string): Promise<AckFloorProbe> {
  const cdp = await CdpConnection.connect(browserWsUrl);
  try {
    const { targetInfos } = await cdp.send("Target.getTargets");
    const target = targetInfos.find((t) => t.type === "page" && t.url === pageUrl);
    if (!target) throw new Error(`no page target at ${pageUrl}`);
    const { sessionId } = await cdp.send("Target.attachToTarget", {
      targetId: target.targetId,
      flatten: true,
    });
    const samples: AckSample[] = [];
    const off = cdp.on("Page.screencastFrame", (p, sid) => {
      if (sid !== sessionId) return;
      const t0 = performance.now();
      const acked = cdp.send("Page.screencastFrameAck", { sessionId: p.sessionId }, sessionId);
      const bytes = Math.floor(p.data.length * 3 / 4);
      acked.then(() => samples.push({ at: t0, ms: performance.now() - t0, bytes }), () => {});
    });
    await cdp.send(
      "Page.startScreencast",
      { format: "jpeg", quality: JPEG_QUALITY, everyNthFrame: 1 },
      sessionId,
    );
    return {
      samples,
      async stop() {
        await cdp.send("Page.stopScreencast", {}, sessionId, 5_000).catch(() => {});
        off();
        await cdp.send("Target.detachFromTarget", { sessionId }, undefined, 5_000).catch(() => {});
        await cdp.close().catch(() => {});
        return samples;
      },
    };
  } catch (err) {
    await cdp.close().catch(() => {});
    throw err;
  }
}

/**
 * The endpoint of the Chromium among `pids` (a server's process tree): the DevToolsActivePort file in the
 * --user-data-dir of the first process started with a remote debugging port.
 */
export async function browserWsUrlOf(pids: Iterable<number>): Promise<string | undefined> {
  for (const pid of pids) {
    let args: string[];
    try {
      args = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
    } catch {
      continue;
    }
    if (!args.some((a) => a.startsWith("--remote-debugging-port"))) continue;
    const dir = args.find((a) => a.startsWith("--user-data-dir="))?.slice("--user-data-dir=".length);
    if (!dir) continue;
    try {
      const [port, path] = (await Deno.readTextFile(join(dir, "DevToolsActivePort"))).split("\n");
      if (port?.trim() && path?.trim()) return `ws://127.0.0.1:${port.trim()}${path.trim()}`;
    } catch { /* not written yet */ }
  }
  return undefined;
}

/**
 * When (seconds on the samples' clock) the recorder's reported acks begin: its status keeps the last
 * `acks` acknowledgements, so with `received` frames in all they start about where the running count of
 * received frames passed received − acks (interpolated between samples); 0 when they are all of them.
 */
export function ackWindowStart(
  samples: ReadonlyArray<{ t: number; received?: number }>,
  received: number | undefined,
  acks: number | undefined,
): number {
  if (received === undefined || acks === undefined || acks >= received) return 0;
  const from = received - acks;
  let prev: { t: number; received: number } | undefined;
  for (const s of samples) {
    if (s.received === undefined) continue;
    if (s.received >= from) {
      if (!prev || s.received === prev.received) return s.t;
      return prev.t + (s.t - prev.t) * (from - prev.received) / (s.received - prev.received);
    }
    prev = { t: s.t, received: s.received };
  }
  return prev?.t ?? 0;
}
