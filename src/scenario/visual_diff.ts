/**
 * The visual difference of two step screenshots (issue 14, "beyond the contract"): how much of the
 * picture changed, where, and an overlay that shows it — the after image dimmed to greyscale, changed
 * pixels painted in a strong colour, their bounds outlined. Pixels are compared by the WASM kernels
 * (vision/pixels.ts) with a small per-channel noise floor so antialiasing jitter does not count.
 *
 * Bounds are CSS pixels: image pixels divided by the screenshots' device scale factor (default 1, where
 * the two are the same), widened to whole CSS pixels. When the two sizes differ only their overlap (the
 * top-left min(width) × min(height)) is compared, `size_mismatch` says so, and the overlay hatches what
 * was not compared.
 */
import { convertIndexedToRgb, decode } from "fast-png";
import type { DecodedPng } from "fast-png";
import { limitExceeded, ToolError } from "../errors.ts";
import { colorizeField, type Palette } from "../vision/colormap.ts";
import { blendImage, blit } from "../vision/compose.ts";
import { type Color, hatchRect, strokeRect } from "../vision/draw.ts";
import type { Rect, RgbaImage } from "../vision/image.ts";
import { diffImages } from "../vision/pixels.ts";
import { encodePng } from "../vision/png.ts";
import { pad16, S_AUX, S_B, S_OUT, S_STATS, wasm } from "../vision/wasm_heap.ts";

/**
 * Largest per-channel difference (0–255) still counted as unchanged. Font antialiasing and image
 * resampling jitter stay within a few levels; 12 keeps them out while a colour change any reader
 * would notice (e.g. #333 → #444 text, 17 levels) still counts.
 */
export const NOISE_FLOOR = 12;

/** Largest image decoded (pixels): a 1280-wide full-page screenshot 31,250 px tall. */
export const MAX_PIXELS = 40_000_000;

export interface SizeMismatch {
  before: { width: number; height: number };
  after: { width: number; height: number };
  /** The overlap that was compared (top-left aligned). */
  compared: { width: number; height: number };
}

export interface VisualDifference {
  /** changed_pixels / (width × height), 0–1. */
  changed_proportion: number;
  changed_pixels: number;
  /** Smallest rectangle holding every changed pixel, in CSS px; null when none changed. */
  bounds: { x: number; y: number; width: number; height: number } | null;
  /** The same rectangle in image pixels (the overlay's own coordinates). */
  pixel_bounds: { x: number; y: number; width: number; height: number } | null;
  /** The device scale factor bounds were divided by. */
  device_scale_factor: number;
  /** Size of the compared area in image pixels: both images' size, or their overlap when they differ. */
  width: number;
  height: number;
  /** The noise floor the comparison used. */
  noise_floor: number;
  /** Set when the sizes differ: the pixels outside the overlap were not compared. */
  size_mismatch: SizeMismatch | null;
  /** The highlighted overlay (PNG, the after image's size). */
  png: Uint8Array;
}

export interface VisualDifferenceOptions {
  /** Per-channel noise floor, 0–255 (default NOISE_FLOOR). */
  noise_floor?: number;
  /** Device pixels per CSS pixel of the screenshots (the capture's environment); default 1. */
  device_scale_factor?: number;
}

const HIGHLIGHT: Color = [255, 0, 170];
const OUTLINE: Color = [255, 214, 0];
const NOT_COMPARED: Color = [120, 120, 130];
const OUTLINE_WIDTH = 2;

/** Luma 0–255 → a dimmed grey ramp, so the highlight reads above any page colour. */
const DIM_PALETTE: Palette = ramp([30, 30, 30], [165, 165, 165], 255);
/** Change magnitude → the highlight colour; 0 (unchanged) stays transparent. */
const HIGHLIGHT_PALETTE: Palette = (() => {
  const p = ramp(HIGHLIGHT, HIGHLIGHT, 255);
  p[3] = 0;
  return p;
})();

function ramp(from: Color, to: Color, alpha: number): Palette {
  const p = new Uint8Array(1024);
  for (let i = 0; i < 256; i++) {
    for (let c = 0; c < 3; c++) p[i * 4 + c] = Math.round(from[c] + ((to[c] - from[c]) * i) / 255);
    p[i * 4 + 3] = alpha;
  }
  return p;
}

/** Compares two PNG screenshots; throws ToolError `screenshot_undecodable` for anything not a PNG. */
export function visualDifference(
  before: Uint8Array,
  after: Uint8Array,
  options: VisualDifferenceOptions = {},
): VisualDifference {
  const a = decodeScreenshot(before, "before");
  const b = decodeScreenshot(after, "after");
  const noise = Math.max(0, Math.min(255, Math.round(options.noise_floor ?? NOISE_FLOOR)));
  const scale = options.device_scale_factor ?? 1;
  if (!(scale > 0) || !Number.isFinite(scale)) {
    throw new ToolError({
      code: "invalid_arguments",
      message: `device_scale_factor must be a positive number, got ${scale}.`,
      retry: "never",
      recovery: "Pass the screenshots' device scale factor (the capture environment's), e.g. 1 or 2.",
      affected: { argument: "device_scale_factor" },
    });
  }
  const width = Math.min(a.width, b.width);
  const height = Math.min(a.height, b.height);
  const sameSize = a.width === b.width && a.height === b.height;
  const overlap: Rect = { x: 0, y: 0, width, height };
  const diff = diffImages(sameSize ? a : cropTo(a, overlap), sameSize ? b : cropTo(b, overlap), {
    noiseFloor: noise,
    mask: true,
  });
  const overlay = dimmed(b);
  if (diff.mask && diff.changedPixels > 0) {
    blendImage(overlay, colorizeField(diff.mask, width, height, HIGHLIGHT_PALETTE, { max: 255 }), 0, 0, 1);
  }
  if (!sameSize) {
    // What lies outside the overlap in the after image was never compared: hatch it, never claim it.
    hatchRect(overlay, { x: width, y: 0, width: b.width - width, height: b.height }, NOT_COMPARED);
    hatchRect(overlay, { x: 0, y: height, width, height: b.height - height }, NOT_COMPARED);
  }
  if (diff.bounds) {
    const r = diff.bounds;
    strokeRect(
      overlay,
      {
        x: r.x - OUTLINE_WIDTH,
        y: r.y - OUTLINE_WIDTH,
        width: r.width + 2 * OUTLINE_WIDTH,
        height: r.height + 2 * OUTLINE_WIDTH,
      },
      OUTLINE,
      OUTLINE_WIDTH,
    );
  }
  return {
    changed_proportion: diff.changedProportion,
    changed_pixels: diff.changedPixels,
    bounds: diff.bounds ? cssRect(diff.bounds, scale) : null,
    pixel_bounds: diff.bounds ? { ...diff.bounds } : null,
    device_scale_factor: scale,
    width,
    height,
    noise_floor: noise,
    size_mismatch: sameSize ? null : {
      before: { width: a.width, height: a.height },
      after: { width: b.width, height: b.height },
      compared: { width, height },
    },
    png: encodePng(overlay),
  };
}

/** Image pixels to CSS px, widened outward so the CSS rectangle still holds every changed pixel. */
function cssRect(r: Rect, scale: number): Rect {
  if (scale === 1) return { ...r };
  const x = Math.floor(r.x / scale);
  const y = Math.floor(r.y / scale);
  return {
    x,
    y,
    width: Math.ceil((r.x + r.width) / scale) - x,
    height: Math.ceil((r.y + r.height) / scale) - y,
  };
}

function cropTo(img: RgbaImage, r: Rect): RgbaImage {
  const out: RgbaImage = { width: r.width, height: r.height, data: new Uint8Array(r.width * r.height * 4) };
  blit(out, img, 0, 0, { source: r });
  return out;
}

/** The image as dimmed greyscale (luma through DIM_PALETTE), in the kernels. */
function dimmed(img: RgbaImage): RgbaImage {
  const h = wasm();
  const n = img.width * img.height;
  const src = h.slot(S_B, pad16(n) * 4);
  const luma = h.slot(S_AUX, pad16(n));
  h.bytes.set(img.data, src);
  h.k.luma_plane(src, n, luma);
  return colorizeField(h.copyBytes(luma, n), img.width, img.height, DIM_PALETTE, { max: 255 });
}

// ---------------------------------------------------------------------------------------------
// Decoding

/** PNG colour types by channel count, as the png_expand kernel takes them. */
const COLOR_TYPE: Record<number, number> = { 1: 0, 2: 4, 3: 2, 4: 6 };

function undecodable(which: string, reason: string): ToolError {
  return new ToolError({
    code: "screenshot_undecodable",
    message: `The ${which} screenshot is not a decodable PNG: ${reason}`,
    retry: "never",
    recovery:
      "Pass the PNG bytes of a screenshot (take_screenshot or a capture's data_base64), not a resource URI.",
    affected: { argument: which },
  });
}

/** Decodes a PNG (npm:fast-png) and expands it to 8-bit RGBA (the png_expand kernel). */
export function decodeScreenshot(png: Uint8Array, which = "image"): RgbaImage {
  let d: DecodedPng;
  try {
    d = decode(png, { checkCrc: true });
  } catch (err) {
    throw undecodable(which, err instanceof Error ? err.message : String(err));
  }
  const n = d.width * d.height;
  if (n > MAX_PIXELS) {
    throw limitExceeded(`the ${which} screenshot's pixel count (${d.width}×${d.height})`, n, MAX_PIXELS);
  }
  if (n === 0) throw undecodable(which, `it is empty (${d.width}×${d.height})`);
  let samples: Uint8Array;
  let channels = d.channels;
  if (d.palette) {
    try {
      samples = convertIndexedToRgb(d);
    } catch (err) {
      throw undecodable(which, err instanceof Error ? err.message : String(err));
    }
    channels = samples.length / n;
  } else if (d.depth === 16) {
    samples = new Uint8Array(d.data.length);
    for (let i = 0; i < d.data.length; i++) samples[i] = d.data[i] >> 8;
  } else if (d.depth === 8) {
    samples = d.data instanceof Uint8Array ? d.data : new Uint8Array(d.data);
  } else {
    throw undecodable(which, `${d.depth}-bit greyscale is not supported (8 or 16 bits per sample)`);
  }
  const colorType = COLOR_TYPE[channels];
  if (colorType === undefined || samples.length !== n * channels) {
    throw undecodable(
      which,
      `unexpected layout: ${channels} channels, ${samples.length} samples for ${n} pixels`,
    );
  }
  const h = wasm();
  const out = h.slot(S_OUT, n * 4);
  const pal = h.slot(S_STATS, 1024);
  const src = h.slot(S_B, samples.length + 16);
  h.bytes.set(samples, src);
  h.k.png_expand(src, out, n, colorType, pal, -1);
  return { width: d.width, height: d.height, data: h.copyBytes(out, n * 4) };
}
