/** Helpers for the shared-budget tests: an instance root's real disk footprint and its status. */
import { join } from "node:path";
import { type ServerHandle, structured } from "./harness.ts";

export interface Retention {
  budget_bytes: number | null;
  share_bytes: number | null;
  instances: number;
  instances_source: string;
  used_bytes: number;
  oldest_retained_at?: string;
  newest_retained_at?: string;
  reclaimed: { segments: number; bytes: number; expired_segments: number; abandoned_roots: number };
  recording_blocked: boolean;
}

export interface CaptureView {
  frames_stored: number;
  frames_over_budget: number;
  retention?: Retention;
}

/** Bytes of every file under a directory (what the instance actually holds on disk). */
export function diskBytes(dir: string): number {
  let n = 0;
  try {
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      try {
        if (entry.isDirectory) n += diskBytes(path);
        else if (entry.isFile) n += Deno.statSync(path).size;
      } catch { /* removed while walking */ }
    }
  } catch { /* removed while walking */ }
  return n;
}

/** The instance roots under a data dir. */
export function instanceRoots(dataDir: string): string[] {
  try {
    return [...Deno.readDirSync(join(dataDir, "instances"))].filter((e) => e.isDirectory)
      .map((e) => join(dataDir, "instances", e.name));
  } catch {
    return [];
  }
}

export async function captureOf(server: ServerHandle): Promise<CaptureView> {
  return structured(await server.call("browser_status", { detail: "expanded" })).capture as CaptureView;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
