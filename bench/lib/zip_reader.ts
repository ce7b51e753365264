/**
 * A minimal zip reader for Playwright's trace archive: the central directory, then one entry at a time
 * (stored or deflated). No zip64: a trace of a benchmark run's size never needs it.
 */

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Lists the entries from the central directory found through the end-of-central-directory record. */
export function zipEntries(buf: Uint8Array): ZipEntry[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let eocd = -1;
  // The record is 22 bytes plus a comment of up to 64 KiB, so it is searched for from the end.
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error("not a zip: no end-of-central-directory record");
  const count = dv.getUint16(eocd + 10, true);
  let p = dv.getUint32(eocd + 16, true);
  if (count === 0xffff || p === 0xffffffff) throw new Error("zip64 archives are not supported");
  const decoder = new TextDecoder();
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (dv.getUint32(p, true) !== 0x02014b50) throw new Error(`bad central directory entry ${i}`);
    const nameLength = dv.getUint16(p + 28, true);
    entries.push({
      name: decoder.decode(buf.subarray(p + 46, p + 46 + nameLength)),
      method: dv.getUint16(p + 10, true),
      compressedSize: dv.getUint32(p + 20, true),
      size: dv.getUint32(p + 24, true),
      localOffset: dv.getUint32(p + 42, true),
    });
    p += 46 + nameLength + dv.getUint16(p + 30, true) + dv.getUint16(p + 32, true);
  }
  return entries;
}

/** An entry's uncompressed bytes. */
export async function zipRead(buf: Uint8Array, e: ZipEntry): Promise<Uint8Array> {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (dv.getUint32(e.localOffset, true) !== 0x04034b50) throw new Error(`bad local header for ${e.name}`);
  // The local header's name and extra field may differ in length from the central directory's.
  const from = e.localOffset + 30 + dv.getUint16(e.localOffset + 26, true) +
    dv.getUint16(e.localOffset + 28, true);
  const data = buf.slice(from, from + e.compressedSize);
  if (e.method === 0) return data;
  if (e.method !== 8) throw new Error(`${e.name}: unsupported compression method ${e.method}`);
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
