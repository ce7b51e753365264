/**
 * Doctor's checks beside the browser: ffmpeg qualification, the configuration the server reads from
 * its environment, the data dir (writable, budget, usage, live instances) and the managed profiles'
 * locks. Each is bounded and reports without changing anything a running server owns.
 */
import { isAbsolute, join } from "node:path";
import { hostname } from "node:os";
import { loadConfig } from "../config.ts";
import { qualifyFfmpeg, runBounded } from "../temporal/ffmpeg.ts";
import { pidAlive } from "../store/pid.ts";
import { listManagedProfiles, profilesRoot, readProfileLock } from "../store/profiles.ts";
import type { CheckResult } from "./doctor_report.ts";
import { formatBytes } from "./progress.ts";

type Env = (k: string) => string | undefined;

const USAGE_WALK_MS = 2_000;
const DF_TIMEOUT_MS = 2_000;
/** Below this much free space recording soon stops on a full disk, whatever the budget says. */
const LOW_FREE_BYTES = 1_000_000_000;

export async function checkFfmpeg(timeoutMs?: number): Promise<CheckResult> {
  const base = { section: "video", name: "ffmpeg", needed: false } as const;
  const q = await qualifyFfmpeg(timeoutMs ? { timeoutMs } : {});
  if (q.available) {
    return {
      ...base,
      status: "ok",
      detail: `${q.encoder} passed a test encode (${q.build})`,
      data: { encoder: q.encoder, build: q.build },
    };
  }
  return {
    ...base,
    status: "warn",
    detail: q.reason,
    fix: "only video is lost (render_video and video.mp4); stills, storyboards and difference maps work. " +
      `For video: ${
        Deno.build.os === "darwin" ? "brew install ffmpeg" : "apt install ffmpeg"
      }, or set KROMETRAIL_FFMPEG to an ffmpeg with libx264 or libopenh264`,
  };
}

/** The environment as the server reads it; a value it refuses stops the server at start. */
export function checkConfig(env: Env): { check: CheckResult; budget?: number } {
  const base = { section: "data", name: "environment", needed: true } as const;
  try {
    const config = loadConfig(env);
    const set = Object.entries({
      KROMETRAIL_DISK_BUDGET_BYTES: env("KROMETRAIL_DISK_BUDGET_BYTES"),
      KROMETRAIL_RETENTION_MAX_AGE_SECS: env("KROMETRAIL_RETENTION_MAX_AGE_SECS"),
      KROMETRAIL_HEADLESS: env("KROMETRAIL_HEADLESS"),
      KROMETRAIL_ALLOW_FILE_URLS: env("KROMETRAIL_ALLOW_FILE_URLS"),
      KROMETRAIL_UPLOAD_ROOT: env("KROMETRAIL_UPLOAD_ROOT"),
      KROMETRAIL_FFMPEG: env("KROMETRAIL_FFMPEG"),
    }).filter(([, v]) => v !== undefined && v !== "").map(([k]) => k);
    return {
      check: {
        ...base,
        status: "ok",
        detail: set.length
          ? `the server accepts its settings (${set.join(", ")})`
          : "no KROMETRAIL_* settings; defaults",
      },
      budget: config.diskBudgetBytes,
    };
  } catch (err) {
    const message = (err as Error).message;
    const name = /^([A-Z_]+) /.exec(message)?.[1];
    return {
      check: {
        ...base,
        status: "fail",
        detail: message,
        fix: `${message}: ${
          name ? `fix ${name} or unset it` : "fix that setting or unset it"
        } (the server refuses to start)`,
      },
    };
  }
}

/** Where the data lives, as the server finds it (only the variables that decide it are read). */
export function dataDirOf(env: Env): string {
  const decides = new Set(["KROMETRAIL_DATA_DIR", "HOME", "XDG_DATA_HOME"]);
  return loadConfig((k) => decides.has(k) ? env(k) : undefined).dataDir;
}

/** Exists (or can be made, as the server would make it) and takes a file that is then removed. */
export async function checkDataDirWritable(dataDir: string, env: Env): Promise<CheckResult> {
  const base = { section: "data", name: "data dir", needed: true } as const;
  const source = env("KROMETRAIL_DATA_DIR") ? "KROMETRAIL_DATA_DIR" : "default";
  const fixFor = (why: string) =>
    `the data dir ${dataDir} ${why}: ${
      source === "KROMETRAIL_DATA_DIR" ? "point KROMETRAIL_DATA_DIR at" : "set KROMETRAIL_DATA_DIR to"
    } a folder you can write, or fix its permissions`;
  let created = false;
  try {
    const info = await Deno.stat(dataDir);
    if (!info.isDirectory) {
      return {
        ...base,
        status: "fail",
        detail: `${dataDir} is not a directory`,
        fix: fixFor("is not a directory"),
      };
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) {
      const why = `cannot be read (${(err as Error).name})`;
      return { ...base, status: "fail", detail: `${dataDir} ${why}`, fix: fixFor(why) };
    }
    try {
      await Deno.mkdir(dataDir, { recursive: true });
      created = true;
    } catch (mkdirErr) {
      const why = `does not exist and cannot be created (${(mkdirErr as Error).name})`;
      return { ...base, status: "fail", detail: `${dataDir} ${why}`, fix: fixFor(why) };
    }
  }
  const probe = join(dataDir, `.doctor-probe-${crypto.randomUUID()}`);
  try {
    await Deno.writeTextFile(probe, "krometrail doctor write probe\n");
    await Deno.remove(probe);
  } catch (err) {
    await Deno.remove(probe).catch(() => {});
    const why = `is not writable (${(err as Error).name})`;
    return { ...base, status: "fail", detail: `${dataDir} ${why}`, fix: fixFor(why) };
  }
  const relative = !isAbsolute(dataDir);
  return {
    ...base,
    status: relative ? "warn" : "ok",
    detail: `${dataDir} (${source}) is writable${created ? "; it did not exist and was created" : ""}`,
    ...(relative
      ? {
        fix:
          "KROMETRAIL_DATA_DIR is relative, so it depends on the folder the MCP client starts in: make it absolute",
      }
      : {}),
    data: { path: dataDir, created },
  };
}

/** Bytes under a folder, walked until the time runs out (then a lower bound, and says so). */
export async function folderUsage(
  dir: string,
  budgetMs = USAGE_WALK_MS,
): Promise<{ bytes: number; complete: boolean }> {
  const deadline = Date.now() + budgetMs;
  let bytes = 0;
  const stack = [dir];
  while (stack.length > 0) {
    if (Date.now() > deadline) return { bytes, complete: false };
    const current = stack.pop() as string;
    try {
      for await (const entry of Deno.readDir(current)) {
        const path = join(current, entry.name);
        if (entry.isDirectory) stack.push(path);
        else if (entry.isFile) bytes += (await Deno.lstat(path).catch(() => ({ size: 0 }))).size;
      }
    } catch { /* vanished or unreadable: counts nothing */ }
  }
  return { bytes, complete: true };
}

/** Free bytes on the disk holding `dir`, from POSIX `df -Pk`; undefined where that cannot be had. */
async function freeBytes(dir: string): Promise<number | undefined> {
  if (Deno.build.os === "windows") return undefined;
  try {
    const run = await runBounded("df", ["-Pk", dir], { timeoutMs: DF_TIMEOUT_MS });
    if (run.code !== 0 || run.timedOut) return undefined;
    const fields = run.stdout.trim().split("\n").pop()?.trim().split(/\s+/) ?? [];
    const kb = Number(fields[3]);
    return Number.isFinite(kb) ? kb * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface InstanceCount {
  live: Array<{ pid: number; host: string; started_at?: string }>;
  abandoned: number;
}

/** Instance roots whose owner (owner.json) is alive: live servers sharing this data dir and its budget. */
export async function countInstances(dataDir: string): Promise<InstanceCount> {
  const out: InstanceCount = { live: [], abandoned: 0 };
  const here = hostname();
  try {
    for await (const entry of Deno.readDir(join(dataDir, "instances"))) {
      if (!entry.isDirectory) continue;
      let owner: { pid?: unknown; host?: unknown; started_at?: unknown };
      try {
        owner = JSON.parse(await Deno.readTextFile(join(dataDir, "instances", entry.name, "owner.json")));
      } catch {
        continue;
      }
      const pid = typeof owner.pid === "number" ? owner.pid : 0;
      const host = typeof owner.host === "string" ? owner.host : "";
      // Another host's process cannot be proved dead: it counts as live, as the server counts it.
      const alive = host !== here || pidAlive(pid);
      if (alive) {
        out.live.push({
          pid,
          host,
          ...(typeof owner.started_at === "string" ? { started_at: owner.started_at } : {}),
        });
      } else out.abandoned++;
    }
  } catch { /* no instances yet */ }
  return out;
}

export async function checkBudgetAndUsage(
  dataDir: string,
  budget: number | undefined,
  env: Env,
): Promise<CheckResult> {
  const base = { section: "data", name: "disk", needed: false } as const;
  const [usage, free] = await Promise.all([folderUsage(dataDir), freeBytes(dataDir)]);
  const budgetText = budget === undefined
    ? "budget unknown (the setting is refused above)"
    : `budget ${formatBytes(budget)} (${
      env("KROMETRAIL_DISK_BUDGET_BYTES") ? "KROMETRAIL_DISK_BUDGET_BYTES" : "default"
    })`;
  const usageText = `${usage.complete ? "" : "at least "}${formatBytes(usage.bytes)} used`;
  const freeText = free === undefined ? "" : ` · ${formatBytes(free)} free on its disk`;
  const data = {
    usage_bytes: usage.bytes,
    usage_complete: usage.complete,
    ...(budget !== undefined ? { budget_bytes: budget } : {}),
    ...(free !== undefined ? { free_bytes: free } : {}),
  };
  const detail = `${budgetText} · ${usageText}${freeText}`;
  if (free !== undefined && free < LOW_FREE_BYTES) {
    return {
      ...base,
      status: "warn",
      detail,
      fix:
        "little free disk space: recording stops when the disk fills; free space or move KROMETRAIL_DATA_DIR",
      data,
    };
  }
  if (budget !== undefined && budget > 0 && usage.bytes > budget) {
    return {
      ...base,
      status: "warn",
      detail,
      fix: "the data dir holds more than the budget: the next server reclaims the oldest evidence first",
      data,
    };
  }
  return { ...base, status: "ok", detail, data };
}

export async function checkInstances(dataDir: string, budget: number | undefined): Promise<CheckResult> {
  const base = { section: "data", name: "instances", needed: false } as const;
  const count = await countInstances(dataDir);
  const live = count.live.length;
  const listed = count.live.slice(0, 6).map((i) =>
    `pid ${i.pid}${i.host !== hostname() ? ` on ${i.host}` : ""}`
  );
  // The budget is shared: a server that starts now gets total / (live + 1).
  const share = budget !== undefined && live > 0
    ? ` · a new server's share: ${formatBytes(Math.floor(budget / (live + 1)))}`
    : "";
  const detail = live === 0
    ? "no live krometrail server uses this data dir"
    : `${live} live server${live === 1 ? "" : "s"} (${listed.join(", ")}${live > 6 ? ", …" : ""})${share}`;
  return {
    ...base,
    status: "ok",
    detail: `${detail}${
      count.abandoned ? ` · ${count.abandoned} abandoned root(s), reclaimed at the next start` : ""
    }`,
    data: { live, abandoned: count.abandoned },
  };
}

function claimPid(dataDir: string, name: string): number | undefined {
  try {
    const pid = JSON.parse(Deno.readTextFileSync(join(profilesRoot(dataDir), `.${name}.claim`)))?.pid;
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Each managed profile's lock: free, held (by Chrome or a krometrail server) or stale. */
export function checkProfiles(dataDir: string): CheckResult[] {
  const profiles = listManagedProfiles(dataDir);
  if (profiles.length === 0) {
    return [{
      section: "profiles",
      name: "profiles",
      status: "ok",
      detail: 'none yet (start_browser creates "default" on first use)',
      needed: false,
    }];
  }
  return profiles.map((p): CheckResult => {
    const base = { section: "profiles", name: p.name, needed: false } as const;
    const lock = readProfileLock(join(profilesRoot(dataDir), p.name));
    const hint =
      `start_browser with profile "${p.name}" fails while it is held; use another profile or temporary: true`;
    if (lock?.live) {
      const where = lock.host !== hostname() ? ` on ${lock.host}` : "";
      return {
        ...base,
        status: "warn",
        detail: `held by Chrome${lock.pid ? ` pid ${lock.pid}` : ""}${where}`,
        fix: hint,
        data: { state: "held", ...(lock.pid ? { pid: lock.pid } : {}) },
      };
    }
    if (p.in_use) {
      const pid = claimPid(dataDir, p.name);
      return {
        ...base,
        status: "warn",
        detail: `claimed by a running krometrail server${pid ? ` (pid ${pid})` : ""}`,
        fix: hint,
        data: { state: "claimed", ...(pid ? { pid } : {}) },
      };
    }
    if (lock) {
      return {
        ...base,
        status: "ok",
        detail: `free (a stale lock from dead pid ${lock.pid}; Chrome clears it on the next start)`,
        data: { state: "stale", pid: lock.pid },
      };
    }
    return { ...base, status: "ok", detail: "free", data: { state: "free" } };
  });
}
