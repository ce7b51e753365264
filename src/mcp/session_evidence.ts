/**
 * The instance's evidence files (screenshots, PDFs, traces, artifacts, videos) that belong to one session, so
 * delete_session can remove them with the session's index rows and segments.
 *
 * Evidence files carry no session column: artifacts and videos name their session in their manifest
 * (and the manifest names its output), while screenshots, PDFs and traces exist only while a browser runs, and this
 * process runs one browser session at a time, so a screenshot belongs to the latest session that had
 * started when it was written (its name starts with the write time in base 36).
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { EVIDENCE_SCHEME } from "../store/instance.ts";

export interface SessionFiles {
  /** Absolute paths to remove. */
  paths: string[];
  bytes: number;
  screenshots: number;
  artifacts: number;
  videos: number;
}

interface SessionSpan {
  id: string;
  started_ms: number;
}

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) if (e.isFile) names.push(e.name);
  } catch { /* nothing written of this kind */ }
  return names;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return 0;
  }
}

/** The write time a reserveEvidence name starts with, else the file's mtime. */
async function writtenMs(path: string, name: string): Promise<number> {
  const prefix = /^([0-9a-z]+)-/.exec(name)?.[1];
  const fromName = prefix ? parseInt(prefix, 36) : NaN;
  if (Number.isFinite(fromName) && fromName > 0) return fromName;
  try {
    return (await Deno.stat(path)).mtime?.getTime() ?? 0;
  } catch {
    return 0;
  }
}

function ownerAt(spans: SessionSpan[], ms: number): string | undefined {
  let owner: string | undefined;
  for (const s of spans) if (s.started_ms <= ms) owner = s.id;
  return owner;
}

/** Bytes under a folder, recursively (the session's segment files). */
export async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      total += e.isDirectory ? await treeBytes(p) : await sizeOf(p);
    }
  } catch { /* absent */ }
  return total;
}

/** Must run before the session's row leaves the index: screenshots are attributed by session start. */
export async function sessionEvidenceFiles(
  db: DatabaseSync,
  instanceRoot: string,
  sessionId: string,
): Promise<SessionFiles> {
  const spans = (db.prepare("SELECT id, started_at FROM sessions").all() as Array<
    { id: string; started_at: string }
  >).map((r) => ({ id: r.id, started_ms: Date.parse(r.started_at) }))
    .filter((s) => Number.isFinite(s.started_ms))
    .sort((a, b) => a.started_ms - b.started_ms);
  const evidence = join(instanceRoot, "evidence");
  const out: SessionFiles = { paths: [], bytes: 0, screenshots: 0, artifacts: 0, videos: 0 };
  const take = async (path: string) => {
    out.paths.push(path);
    out.bytes += await sizeOf(path);
  };

  // PDFs and traces, like screenshots, are written only while their browser runs.
  for (const kind of ["screenshots", "pdfs", "traces"]) {
    const dir = join(evidence, kind);
    for (const name of await entries(dir)) {
      const path = join(dir, name);
      if (ownerAt(spans, await writtenMs(path, name)) !== sessionId) continue;
      await take(path);
      if (kind === "screenshots") out.screenshots++;
      else out.artifacts++;
    }
  }

  // Manifests live beside artifact images; a video's manifest names its file under videos/.
  const artifactsDir = join(evidence, "artifacts");
  for (const name of await entries(artifactsDir)) {
    if (!name.endsWith(".json")) continue;
    const path = join(artifactsDir, name);
    let manifest: { session_id?: unknown; resolved_range?: { session_id?: unknown }; output_uri?: unknown };
    try {
      manifest = JSON.parse(await Deno.readTextFile(path));
    } catch {
      continue;
    }
    const owner = manifest.session_id ?? manifest.resolved_range?.session_id;
    if (owner !== sessionId) continue;
    await take(path);
    const output = typeof manifest.output_uri === "string" ? manifest.output_uri : "";
    const rel = output.startsWith(EVIDENCE_SCHEME) ? output.slice(EVIDENCE_SCHEME.length) : "";
    const kind = /^(artifacts|videos)\/[A-Za-z0-9_.-]+$/.exec(rel)?.[1];
    if (kind) {
      await take(join(evidence, rel));
      if (kind === "videos") out.videos++;
      else out.artifacts++;
    } else out.artifacts++;
  }
  return out;
}

/** Removes the files; returns the bytes actually given back. */
export async function removeFiles(files: SessionFiles): Promise<number> {
  let freed = 0;
  for (const path of files.paths) {
    const size = await sizeOf(path);
    try {
      await Deno.remove(path);
      freed += size;
    } catch { /* already gone */ }
  }
  return freed;
}
