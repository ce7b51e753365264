/**
 * On-disk format identities. One current index format exists; anything else is classified and
 * the disposable recording cache is cleared rather than migrated (spec: Disk Budget and Retention).
 */
export const INDEX_FORMAT_VERSION = 2;
export const INDEX_FILE = "index.sqlite";
/** Recording cache members under an instance root; profiles and config live elsewhere. */
export const CACHE_MEMBERS = [
  INDEX_FILE,
  `${INDEX_FILE}-wal`,
  `${INDEX_FILE}-shm`,
  "segments",
  "artifacts",
  "deleting",
];

/** Frame record in a segment: magic, header length-prefixed, then the encoded image bytes. */
export const FRAME_MAGIC = 0x4b544631; // "KTF1"
/** magic u32, ordinal u32, recv_ns f64, payload length u32, crc32 of payload u32. */
export const FRAME_HEADER_BYTES = 24;
/** A segment is sealed after this long or this many bytes, whichever comes first. */
export const SEGMENT_MAX_AGE_NS = 10_000_000_000;
export const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
