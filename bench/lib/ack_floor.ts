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
    const latencies: number[] = [];
    let bytes = 0;
    conn.on("Page.screencastFrame", (p, sid) => {
      if (sid !== sessionId) return;
      const t0 = performance.now();
      bytes += Math.floor(p.data.length * 3 / 4);
      conn.send("Page.screencastFrameAck", { sessionId: p.sessionId }, sessionId)
        .then(() => latencies.push(performance.now() - t0), () => {});
    });
    await conn.send(
      "Page.startScreencast",
      { format: "jpeg", quality: JPEG_QUALITY, everyNthFrame: 1 },
      sessionId,
    );
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    await conn.send("Page.stopScreencast", {}, sessionId);
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return {
      frames: latencies.length,
      p50: at(0.5),
      p99: at(0.99),
      max: latencies[latencies.length - 1] ?? NaN,
      bytesPerFrame: latencies.length ? bytes / latencies.length : NaN,
    };
  } finally {
    await cdp?.close().catch(() => {});
    try {
      chrome.process.kill("SIGKILL");
    } catch { /* gone */ }
    await chrome.process.status.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
