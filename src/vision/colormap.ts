/** Colour maps: 256-entry palettes and the mapping of scalar fields (times, counts) to RGBA. */
import type { RgbaImage } from "./image.ts";
import { S_AUX, S_OUT, S_STATS, wasm } from "./wasm_heap.ts";

/** A 256-entry RGBA palette (1024 bytes). */
export type Palette = Uint8Array;

function paletteFrom(stops: readonly (readonly [number, number, number])[]): Palette {
  const p = new Uint8Array(1024);
  for (let i = 0; i < 256; i++) {
    const pos = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(pos));
    const f = pos - k;
    for (let c = 0; c < 3; c++) p[i * 4 + c] = Math.round(stops[k][c] * (1 - f) + stops[k + 1][c] * f);
    p[i * 4 + 3] = 255;
  }
  return p;
}

/**
 * Ready palettes: `gray` (black → white, intensity), `time` (viridis-like dark violet → yellow, for
 * "when": early is dark, late is bright, and it stays readable in grayscale), `heat` (black → red →
 * yellow → white).
 */
export const PALETTES: { readonly gray: Palette; readonly time: Palette; readonly heat: Palette } = {
  gray: paletteFrom([[0, 0, 0], [255, 255, 255]]),
  time: paletteFrom([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]]),
  heat: paletteFrom([[0, 0, 0], [200, 30, 0], [255, 200, 0], [255, 255, 255]]),
};

export interface ColorizeOptions {
  /** Value mapped to the first palette entry; default 0. */
  min?: number;
  /** Value mapped to the last palette entry; default 1. */
  max?: number;
  /** RGBA for NaN (no data); default transparent black. */
  empty?: readonly [number, number, number, number];
}

/**
 * Maps a width × height scalar field to RGBA through `palette` (values clamped to [min, max]; NaN →
 * `empty`). Integer fields (e.g. change counts) are converted to f32 first.
 */
export function colorizeField(
  field: Float32Array | Uint32Array | Uint16Array | Uint8Array,
  width: number,
  height: number,
  palette: Palette,
  options: ColorizeOptions = {},
): RgbaImage {
  const n = width * height;
  if (field.length !== n) {
    throw new Error(`colorizeField: field has ${field.length} values, ${width}×${height} needs ${n}`);
  }
  if (palette.length !== 1024) {
    throw new Error(`colorizeField: palette has ${palette.length} bytes, needs 1024`);
  }
  const h = wasm();
  const f = h.slot(S_AUX, n * 4);
  const pal = h.slot(S_STATS, 1024);
  const out = h.slot(S_OUT, n * 4);
  h.f32(f, n).set(field); // writing into WASM memory converts element types at memcpy speed
  h.bytes.set(palette, pal);
  const [r, g, b, a] = options.empty ?? [0, 0, 0, 0];
  const empty = ((r & 255) | ((g & 255) << 8) | ((b & 255) << 16) | ((a & 255) << 24)) >>> 0;
  h.k.colorize(f, n, options.min ?? 0, options.max ?? 1, pal, empty, out);
  return { width, height, data: h.copyBytes(out, n * 4) };
}
