/**
 * The acknowledgement floor: a bare CDP client (the same socket krometrail uses, and nothing else: no
 * ingest worker, no disk, no analysis) records the same page with the same screencast settings and
 * times each Page.screencastFrameAck round trip. What krometrail adds over this is its own overhead;
 * the rest is Chromium answering while its own processes load the machine.
 */
import { CdpConnection } from "../../src/browser/cdp.ts";
import { launchChrome } from "../../src/browser/launch.ts";
import { JPEG_QUALITY } from "../../src/capture/screencast.ts";
import { CHROMIUM } from "./chromium.ts";

export interface AckFloor {
  frames: number;
  p50: number;
  p99: number;
  max: number;
  bytesPerFrame: number;
}

/** One acknowledgement: when its frame was delivered (performance.now() of this process) and its latency. */
export interface AckSample {
  at: number;
  ms: number;
  bytes: number;
}

/** Percentiles taken the way the recorder takes them: the sample at floor(q·n) of the sorted list. */
export function floorOf(samples: readonly AckSample[]): AckFloor {
  const latencies = samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const bytes = samples.reduce((a, s) => a + s.bytes, 0);
  return {
    frames: latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    max: latencies[latencies.length - 1] ?? NaN,
    bytesPerFrame: latencies.length ? bytes / latencies.length : NaN,
  };
}

export async function measureAckFloor(url: string, seconds: number): Promise<AckFloor> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-ack-floor-" });
  const chrome = await launchChrome({
    executable: CHROMIUM,
    userDataDir: dir,
    profileLabel: "ack-floor",
    headless: true,
  });
  let cdp: CdpConnection | undefined;
  try {
    cdp = await CdpConnection.connect(chrome.browserWsUrl);
    const { targetInfos } = await cdp.send("Target.getTargets");
    const target = targetInfos.find((t) => t.type === "page");
    if (!target) throw new Error("no page target");
    const { sessionId } = await cdp.send("Target.attachToTarget", {
      targetId: target.targetId,
      flatten: true,
    });
    const conn = cdp;
    await conn.send("Page.enable", {}, sessionId);
    await conn.send("Page.navigate", { url }, sessionId);
    await new Promise((r) => setTimeout(r, 1_000));
    const samples: AckSample[] = [];
    conn.on("Page.screencastFrame", (p, sid) => {
      if (sid !== sessionId) return;
      const t0 = performance.now();
      const bytes = Math.floor(p.data.length * 3 / 4);
      conn.send("Page.screencastFrameAck", { sessionId: p.sessionId }, sessionId)
        .then(() => samples.push({ at: t0, ms: performance.now() - t0, bytes }), () => {});
    });
    await conn.send(
      "Page.startScreencast",
      { format: "jpeg", quality: JPEG_QUALITY, everyNthFrame: 1 },
      sessionId,
    );
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    await conn.send("Page.stopScreencast", {}, sessionId);
    return floorOf(samples);
  } finally {
    await cdp?.close().catch(() => {});
    try {
      chrome.process.kill("SIGKILL");
    } catch { /* gone */ }
    await chrome.process.status.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
