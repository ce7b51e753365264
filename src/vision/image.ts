/** A decoded picture: 8-bit RGBA, row-major, no padding (stride = width * 4). */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

export function createImage(
  width: number,
  height: number,
  fill?: readonly [number, number, number],
): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  const [r, g, b] = fill ?? [0, 0, 0];
  for (let i = 0; i < data.length; i += 4) {
    data[i] = r;
    data[i + 1] = g;
    data[i + 2] = b;
    data[i + 3] = 255;
  }
  return { width, height, data };
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}
