import { join, relative } from "node:path";

/** One file under the data dir that holds a planted secret, and how often. */
export interface SecretHit {
  file: string;
  secret: string;
  count: number;
}

function countBytes(haystack: Uint8Array, needle: Uint8Array): number {
  let n = 0;
  const first = needle[0];
  outer: for (
    let i = haystack.indexOf(first);
    i >= 0 && i <= haystack.length - needle.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    n++;
  }
  return n;
}

/** Every regular file under `root`, recursively, except those under the `skip` directories. */
export async function* filesUnder(root: string, skip: string[] = []): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(root)) {
    const path = join(root, entry.name);
    if (skip.includes(path)) continue;
    if (entry.isDirectory) yield* filesUnder(path, skip);
    else if (entry.isFile) yield path;
  }
}

/**
 * Byte-greps every file (all bytes: SQLite pages, WAL, segments, evidence) for each secret, in the raw
 * form and percent-encoded, since Chrome may hand URLs over encoded; file names count too.
 */
export async function grepSecrets(root: string, secrets: string[], skip: string[] = []): Promise<{
  files: number;
  bytes: number;
  hits: SecretHit[];
}> {
  const enc = new TextEncoder();
  const needles = secrets.flatMap((s) => {
    const forms = new Set([s, encodeURIComponent(s)]);
    return [...forms].map((f) => ({ secret: s, bytes: enc.encode(f) }));
  });
  const hits: SecretHit[] = [];
  let files = 0;
  let bytes = 0;
  for await (const path of filesUnder(root, skip)) {
    const data = await Deno.readFile(path).catch(() => new Uint8Array());
    files++;
    bytes += data.length;
    // A download or evidence file named after a URL would leak through its name, not its bytes.
    for (const secret of secrets) {
      if (relative(root, path).includes(secret)) hits.push({ file: relative(root, path), secret, count: 1 });
    }
    for (const n of needles) {
      const count = countBytes(data, n.bytes);
      if (count > 0) hits.push({ file: relative(root, path), secret: n.secret, count });
    }
  }
  return { files, bytes, hits };
}
