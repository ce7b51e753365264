/** Width and height from a JPEG's start-of-frame marker; undefined when there is none. */
export function jpegDimensions(b: Uint8Array): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker === 0xff) { // fill byte
      i++;
      continue;
    }
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: (b[i + 7] << 8) | b[i + 8], height: (b[i + 5] << 8) | b[i + 6] };
    }
    i += 2 + ((b[i + 2] << 8) | b[i + 3]);
  }
  return undefined;
}

/** "800×450", for reports. */
export function jpegSize(b: Uint8Array): string | undefined {
  const d = jpegDimensions(b);
  return d ? `${d.width}×${d.height}` : undefined;
}
