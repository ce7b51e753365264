import { logger } from "../log.ts";
import { isTemporaryProfileDir } from "../store/browser_record.ts";

const log = logger("browser");

/**
 * Chrome has no parent-death option, so a SIGKILLed server would leave it running. The watchdog
 * is a tiny POSIX shell that holds the read end of a pipe whose only write end lives in the
 * server. Whatever ends the server (SIGKILL included), the kernel closes that end, `read` sees
 * EOF, and the watchdog kills Chrome's process group. A normal stop writes "disarm" first.
 *
 * It ignores the terminal's signals and sits in its own session, so Ctrl-C or a group kill aimed
 * at the server cannot take the watchdog down before it has done its job. Before a group kill it
 * checks that the group leader is still that Chrome (its --user-data-dir), so a reused pid is
 * left alone. $1 pid, $2 profile dir, $3 "group"|"pid", $4 "temporary"|"kept".
 */
const WATCHDOG_SCRIPT = `
trap '' INT TERM HUP QUIT PIPE
case "$1" in ''|*[!0-9]*|0|1) exit 0 ;; esac
IFS= read -r line
[ "$line" = disarm ] && exit 0
target="-$1"; [ "$3" = group ] || target="$1"
if command -v ps >/dev/null 2>&1; then
  leader=$(ps -ww -o stat= -o args= -p "$1" 2>/dev/null)
  case "$leader" in
    Z*) kill -KILL "$target" 2>/dev/null ;;
    *"--user-data-dir=$2"*) kill -KILL "$target" 2>/dev/null ;;
  esac
else
  kill -KILL "$target" 2>/dev/null
fi
if [ "$4" = temporary ]; then
  i=0
  while [ $i -lt 30 ] && kill -0 "$target" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
  case "$2" in */krometrail-profile-*) rm -rf -- "$2" ;; esac
fi
`;

/** The name the watchdog runs under ($0), so `ps` shows what it is. */
export const WATCHDOG_NAME = "krometrail-watchdog";

const SETSID_CANDIDATES = ["/usr/bin/setsid", "/bin/setsid"];

let setsidPath: string | null | undefined;

/**
 * util-linux `setsid`, which makes the spawned program lead a new session and process group
 * and then execs it in place (same pid), so Chrome and every helper it forks share one group
 * that can be killed at once. Absent (macOS, minimal images): Chrome shares the server's group
 * and only its browser process is killed; its helpers exit when it does.
 */
export function sessionLeaderLauncher(): string | undefined {
  if (setsidPath !== undefined) return setsidPath ?? undefined;
  setsidPath = null;
  if (Deno.build.os === "linux") {
    for (const path of SETSID_CANDIDATES) {
      try {
        if (Deno.statSync(path).isFile) {
          setsidPath = path;
          break;
        }
      } catch { /* not here */ }
    }
  }
  return setsidPath ?? undefined;
}

export interface Watchdog {
  readonly pid: number;
  /** Tells the watchdog its browser ended normally; it exits without killing anything. */
  disarm(): Promise<void>;
}

export interface WatchedBrowser {
  pid: number;
  /** Chrome leads its own process group (launched through setsid). */
  group: boolean;
  profileDir: string;
  temporary: boolean;
}

/** Starts the watchdog for a launched browser; undefined where no POSIX shell exists (Windows). */
export function armWatchdog(browser: WatchedBrowser): Watchdog | undefined {
  if (Deno.build.os === "windows" || browser.pid <= 1) return undefined;
  const leader = sessionLeaderLauncher();
  const shellArgs = [
    "-c",
    WATCHDOG_SCRIPT,
    WATCHDOG_NAME,
    String(browser.pid),
    browser.profileDir,
    browser.group ? "group" : "pid",
    browser.temporary && isTemporaryProfileDir(browser.profileDir) ? "temporary" : "kept",
  ];
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(leader ?? "sh", {
      args: leader ? ["sh", ...shellArgs] : shellArgs,
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
  } catch (err) {
    log.warn("could not start the browser watchdog; the browser may outlive a killed server: {error}", {
      error: String(err),
    });
    return undefined;
  }
  // The watchdog must never keep the server alive; the pipe's write end is all it needs from us.
  child.unref();
  child.status.catch(() => {});
  const writer = child.stdin.getWriter();
  let disarmed = false;
  return {
    pid: child.pid,
    async disarm() {
      if (disarmed) return;
      disarmed = true;
      try {
        await writer.write(new TextEncoder().encode("disarm\n"));
        await writer.close();
      } catch { /* watchdog already gone */ }
    },
  };
}
