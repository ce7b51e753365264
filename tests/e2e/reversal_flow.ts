import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { type ServerHandle, structured } from "./harness.ts";

/** One configuration of fixtures/site/reversal.html (query parameters, in px and ms). */
export interface ReversalParams {
  dist: number;
  hold: number;
  back: number;
  away: number;
  /** Rest position; the extreme itself when omitted. */
  rest?: number;
}

/** A frame as the panel shows it: id, Chrome's paint timestamp (s) and the panel's offset. */
export interface PanelFrame {
  frame_id: number;
  paint: number;
  x: number | null;
}

export interface ReversalRun {
  interaction_id: string;
  /** Every source frame of the range in paint order (Chrome's timestamps; receipt order can differ). */
  source: PanelFrame[];
  /** The storyboard's tiles in the order it shows them. */
  tiles: PanelFrame[];
  /** The bundle's transient states (frame first showing each look, and when it was shown). */
  states: Array<
    { frame_id: number; replaced_by_frame_id: number | null; appeared_ms: number; looks_final: string | null }
  >;
  text: string;
}

/** Decoding at 1/4 scale puts the panel's left edge on a 4 px grid; this covers that and easing. */
const TOLERANCE_PX = 12;
/** Two frames whose panel offsets are this close show one look (the 1/4-scale decoding grid). */
const HELD_PX = 4;
const SCALE = 4;

/** The panel's left edge as an offset from where it starts (left 40 px), read on its middle row. */
export function panelOffset(jpeg: Uint8Array): number | null {
  const img = decodeJpeg(jpeg, { scale: SCALE });
  const y = Math.round(320 / SCALE);
  for (let x = 0; x < img.width; x++) {
    const i = (y * img.width + x) * 4;
    const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
    if (r < 70 && g < 110 && b > 150) return x * SCALE - 40;
  }
  return null;
}

/**
 * True when a frame at the extreme is followed, in this order and in paint time, by one clearly back
 * from it: the reversal as it happened. Tiles shown out of paint order cannot make one up.
 */
export function showsReversal(frames: PanelFrame[], p: ReversalParams): boolean {
  return frames.some((a, i) =>
    isExtreme(a.x, p) &&
    frames.slice(i + 1).some((b) => b.x !== null && b.x <= p.dist - p.back / 2 && b.paint > a.paint)
  );
}

/** True when some tile is shown after one Chrome painted later. */
export function outOfPaintOrder(frames: PanelFrame[]): boolean {
  return frames.some((f, i) => i > 0 && f.paint < frames[i - 1].paint);
}

/** Frames at the extreme that some frame clearly back from it follows in paint time. */
export function extremesBeforeReturn(frames: PanelFrame[], p: ReversalParams): PanelFrame[] {
  return frames.filter((a) =>
    isExtreme(a.x, p) && frames.some((b) => b.x !== null && b.x <= p.dist - p.back / 2 && b.paint > a.paint)
  );
}

/**
 * Extremes before the return that the capture shows held: the look stays (within a few pixels) for at
 * least `minMs` of paint time. A frame caught at the extreme only in passing (Chrome painted the hold
 * late or not at all, as a loaded machine does) is motion, and no bundle can honestly call it a state.
 */
export function heldExtremesBeforeReturn(
  frames: PanelFrame[],
  p: ReversalParams,
  minMs: number,
): PanelFrame[] {
  return extremesBeforeReturn(frames, p).filter((a) => {
    const i = frames.indexOf(a);
    const next = frames.slice(i + 1).find((b) =>
      b.x === null || a.x === null || Math.abs(b.x - a.x) > HELD_PX
    );
    return next !== undefined && (next.paint - a.paint) * 1000 >= minMs;
  });
}

export function isExtreme(x: number | null, p: ReversalParams): boolean {
  return x !== null && x >= p.dist - TOLERANCE_PX;
}

async function frameBytes(server: ServerHandle, uri: string): Promise<Uint8Array> {
  const res = await server.client.readResource({ uri });
  const blob = (res.contents[0] as { blob?: string }).blob ?? "";
  return Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
}

/** Opens the fixture with these timings, clicks "Move panel", waits for rest, reads the bundle. */
export async function runReversal(
  server: ServerHandle,
  origin: string,
  p: ReversalParams,
): Promise<ReversalRun> {
  const q = new URLSearchParams({
    dist: String(p.dist),
    hold: String(p.hold),
    back: String(p.back),
    away: String(p.away),
    ...(p.rest === undefined ? {} : { rest: String(p.rest) }),
  });
  await server.call("navigate_page", { url: `${origin}/reversal.html?${q}` });
  const clicked = structured(await server.call("click", { locator: { role: "button", name: "Move panel" } }));
  if (clicked.status !== "ok") throw new Error(`click failed: ${JSON.stringify(clicked).slice(0, 300)}`);
  const interaction = String(clicked.interaction_id);
  const waited = await server.call("wait", {
    condition: "document.getAnimations().every((a) => a.playState === 'finished')",
    timeout_ms: 10_000,
  });
  if (waited.isError) throw new Error("the animation did not finish");
  const result = await server.call("temporal_debug_bundle", {
    interaction_id: interaction,
    inline_images: false,
  });
  if (result.isError) throw new Error(`bundle failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  const bundle = structured(result);
  const selected = bundle.selected_frame_ids as number[];
  const listed = structured(
    await server.call("list_source_frames", { interaction_id: interaction, max_frames: 200 }),
  );
  // The storyboard may open with the frame on screen at the range start, which the listing leaves out.
  const fetched = structured(
    await server.call("fetch_source_frames", { frame_ids: selected, inline_images: false }),
  );
  type Row = { frame_id: number; uri: string; chrome_timestamp: number | null; session_time_ms: number };
  const rows = new Map<number, Row>();
  for (const f of [...listed.frames as Row[], ...fetched.frames as Row[]]) rows.set(f.frame_id, f);
  const seen = new Map<number, PanelFrame>();
  const panel = async (id: number): Promise<PanelFrame> => {
    const hit = seen.get(id);
    if (hit) return hit;
    const row = rows.get(id);
    if (!row) throw new Error(`frame ${id} not listed`);
    const f = {
      frame_id: id,
      paint: row.chrome_timestamp ?? row.session_time_ms / 1e3,
      x: panelOffset(await frameBytes(server, row.uri)),
    };
    seen.set(id, f);
    return f;
  };
  const source = await Promise.all((listed.frames as Row[]).map((f) => panel(f.frame_id)));
  return {
    interaction_id: interaction,
    source: source.sort((a, b) => a.paint - b.paint),
    tiles: await Promise.all(selected.map(panel)),
    states: (bundle.bundles as Array<{ measurements: { transient_states: ReversalRun["states"] } }>)[0]
      .measurements.transient_states,
    text: result.content.filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n"),
  };
}
