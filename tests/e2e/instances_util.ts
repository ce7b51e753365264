/** Helpers for the multi-instance tests: which root a server owns, and its retention figures. */
import { join } from "node:path";
import { type ServerHandle, structured, textOf } from "./harness.ts";
import { captureOf, instanceRoots, type Retention } from "./budget_util.ts";

/** The instance root whose owner.json names this pid, or undefined. */
export function rootOfPid(dataDir: string, pid: number): string | undefined {
  return instanceRoots(dataDir).find((root) => {
    try {
      return JSON.parse(Deno.readTextFileSync(join(root, "owner.json"))).pid === pid;
    } catch {
      return false;
    }
  });
}

/**
 * One operation's retention figures: under `capture` while the server records, under `server`
 * when it is idle (browser_status reports it in one place or the other).
 */
export async function retentionOf(server: ServerHandle, recording: boolean): Promise<Retention> {
  if (recording) {
    const r = (await captureOf(server)).retention;
    if (!r) throw new Error("a recording server's status carries capture.retention");
    return r;
  }
  const status = structured(await server.call("browser_status", { detail: "expanded" }));
  const r = (status.server as { retention?: Retention }).retention;
  if (!r) throw new Error(`an idle server's status carries server.retention: ${JSON.stringify(status)}`);
  return r;
}

/** The idle status's retention together with the text an agent reads. */
export async function idleStatus(server: ServerHandle): Promise<{ retention: Retention; text: string }> {
  const result = await server.call("browser_status", {});
  const r = (structured(result).server as { retention?: Retention }).retention;
  if (!r) throw new Error(`idle status carries server.retention: ${textOf(result)}`);
  return { retention: r, text: textOf(result) };
}

/** A pid that is certainly dead: a process that ran, exited and was reaped. */
export async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}
