/**
 * The page-state bench's view of one krometrail server: timed tool calls over stdio, browser sessions
 * with or without DOM recording, and the DOM-chunk totals the server's own index holds for a session.
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { type ServerHandle, startServer, textOf, type ToolResult } from "../../tests/e2e/harness.ts";
import { CHROMIUM } from "./chromium.ts";

/** Long enough for a 10-minute bisect or a cold replay; a hung call still ends the run. */
const CALL_TIMEOUT_MS = 120_000;

export interface Timed {
  ms: number;
  result: ToolResult;
  structured: Record<string, unknown>;
}

export interface DomTotals {
  chunks: number;
  checkpoints: number;
  events: number;
  /** Stored (compressed) bytes: the sum of the chunks' record lengths. */
  stored_bytes: number;
  /** The same events as raw JSON. */
  raw_bytes: number;
  first_ms: number | undefined;
  last_ms: number | undefined;
}

export class BenchServer {
  private constructor(readonly handle: ServerHandle, readonly label: string) {}

  static async start(label: string, tmp: string): Promise<BenchServer> {
    const handle = await startServer({ env: { KROMETRAIL_CHROME: CHROMIUM, TMPDIR: tmp } });
    return new BenchServer(handle, label);
  }

  /** One tool call, timed as the MCP round trip the client sees; a tool error fails the bench step. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<Timed> {
    const t0 = performance.now();
    const result = await this.handle.client.callTool({ name, arguments: args }, {
      timeout: CALL_TIMEOUT_MS,
    }) as ToolResult;
    const ms = performance.now() - t0;
    if (result.isError) throw new Error(`${this.label}: ${name} failed: ${textOf(result).slice(0, 400)}`);
    return { ms, result, structured: result.structuredContent ?? {} };
  }

  /** A headless temporary-profile browser; returns the session id. */
  async startBrowser(recordDom: boolean): Promise<string> {
    const r = await this.call("start_browser", { headless: true, temporary: true, record_dom: recordDom });
    const id = r.structured.session_id;
    if (typeof id !== "string") throw new Error(`${this.label}: start_browser named no session_id`);
    return id;
  }

  async stopBrowser(): Promise<void> {
    await this.call("stop_browser", {});
  }

  /** DOM-chunk totals of a session, read from the index the server writes (a WAL reader never blocks it). */
  async domTotals(sessionId: string): Promise<DomTotals> {
    const path = await findIndex(this.handle.dataDir);
    if (!path) throw new Error(`${this.label}: no index.sqlite under ${this.handle.dataDir}`);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      db.exec("PRAGMA busy_timeout = 5000;");
      const row = db.prepare(
        `SELECT count(*) AS chunks, coalesce(sum(checkpoint), 0) AS checkpoints,
                coalesce(sum(events), 0) AS events, coalesce(sum(length), 0) AS stored,
                coalesce(sum(raw_bytes), 0) AS raw, min(first_ns) AS first_ns, max(last_ns) AS last_ns
           FROM dom_chunks WHERE session_id = ?`,
      ).get(sessionId) as Record<string, number | null> | undefined;
      const n = (k: string) => Number(row?.[k] ?? 0);
      const ms = (k: string) => row?.[k] == null ? undefined : Number(row[k]) / 1e6;
      return {
        chunks: n("chunks"),
        checkpoints: n("checkpoints"),
        events: n("events"),
        stored_bytes: n("stored"),
        raw_bytes: n("raw"),
        first_ms: ms("first_ns"),
        last_ms: ms("last_ns"),
      };
    } finally {
      db.close();
    }
  }

  async close(): Promise<void> {
    await this.call("stop_browser", {}).catch(() => {});
    await this.handle.close();
  }
}

/** The newest index.sqlite under a data dir (the instance root is a level or two down). */
async function findIndex(dir: string): Promise<string | undefined> {
  let best: { path: string; mtime: number } | undefined;
  const walk = async (d: string, depth: number) => {
    for await (const entry of Deno.readDir(d)) {
      const path = join(d, entry.name);
      if (entry.isFile && entry.name === "index.sqlite") {
        const mtime = (await Deno.stat(path)).mtime?.getTime() ?? 0;
        if (!best || mtime > best.mtime) best = { path, mtime };
      } else if (entry.isDirectory && depth < 4) await walk(path, depth + 1);
    }
  };
  await walk(dir, 0);
  return best?.path;
}
