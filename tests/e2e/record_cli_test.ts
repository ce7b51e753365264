/**
 * `krometrail record` as a person runs it: the real CLI as a subprocess under the binary's permission
 * flags, on a fixture page where a click changes the view, then the report opened offline in Chromium.
 */
import { chromium } from "playwright-core";
import { basename, join } from "node:path";
import { existsSync } from "node:fs";
import { TEMP_PROFILE_PREFIX } from "../../src/store/browser_record.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { serveStatic } from "../../src/demo/static_server.ts";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, REPO_ROOT } from "./harness.ts";

const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PROGRESS_LINE = /^krometrail record: \d+ frames · \d+\.\d s · [\d.]+ (B|KB|MB|GB) on disk/;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function record(args: string[], env: Record<string, string>): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "record", ...args],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), KROMETRAIL_HEADLESS: "1", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * A long recording stopped by SIGTERM once it is recording (its progress line says so), as a supervisor
 * or a closed terminal would stop it; TMPDIR is the caller's, so the temporary profile can be looked for.
 */
async function recordUntilSigterm(args: string[], env: Record<string, string>): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "record", ...args],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), KROMETRAIL_HEADLESS: "1", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Response(child.stdout).text();
  let stderr = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let signalled = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
    if (!signalled && /· recording \d+ s/.test(stderr)) {
      child.kill("SIGTERM");
      signalled = true;
    }
  }
  const status = await child.status;
  return { code: status.code, stdout: await stdout, stderr };
}

function lastLine(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}

async function head(path: string, n: number): Promise<number[]> {
  return [...(await Deno.readFile(path)).subarray(0, n)];
}

/** Opens report.html from disk with the network off; returns what a person would see and every request. */
async function openOffline(reportPath: string): Promise<{
  storyboardWidth: number;
  differenceWidth: number;
  text: string;
  requests: string[];
  refused: string[];
}> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const context = await browser.newContext({ offline: true });
    const page = await context.newPage();
    const requests: string[] = [];
    const refused: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => {
      if (/Content Security Policy|Refused/i.test(m.text())) refused.push(m.text());
    });
    await page.goto(new URL(`file://${reportPath}`).href, { waitUntil: "load" });
    // A string: the test's own type library has no DOM.
    const seen = await page.evaluate(`(() => {
      const img = (id) => document.getElementById(id)?.naturalWidth ?? 0;
      return { storyboard: img("storyboard"), difference: img("difference-map"), text: document.body.innerText };
    })()`) as { storyboard: number; difference: number; text: string };
    return {
      storyboardWidth: seen.storyboard,
      differenceWidth: seen.difference,
      text: seen.text,
      requests,
      refused,
    };
  } finally {
    await browser.close();
  }
}

Deno.test(
  "krometrail record: writes every promised file, the report opens offline with its storyboard",
  e2e,
  async () => {
    const site = serveStatic();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-record-data-" });
    const cwd = await Deno.makeTempDir({ prefix: "krometrail-record-cwd-" });
    try {
      const url = `${site.origin}/record/index.html`;
      // No --out: the folder is named by time under INIT_CWD, where the user typed the command.
      const run = await record(
        [url, "--click", "Show details", "--wait-ms", "300", "--fill", "Name=Ada", "--seconds", "2"],
        { KROMETRAIL_DATA_DIR: dataDir, INIT_CWD: cwd },
      );
      assertEquals(run.code, 0, run.stderr);
      const folder = lastLine(run.stdout);
      assertEquals(join(cwd, basename(folder)), folder, "the last stdout line is the folder, under INIT_CWD");
      assertMatch(basename(folder), /^krometrail-record-\d{4}-\d\d-\d\dT/);

      const progress = run.stderr.split("\n").filter((l) => PROGRESS_LINE.test(l));
      assert(progress.length >= 2, `progress lines on stderr (one a second off a TTY):\n${run.stderr}`);
      assert(!run.stderr.includes("\r"), "off a TTY the line does not rewrite itself");
      const frames = progress.map((l) => Number(/(\d+) frames/.exec(l)?.[1]));
      assert(
        frames[frames.length - 1] > 0 && frames[frames.length - 1] >= frames[0],
        `frames grow: ${frames}`,
      );

      for (const name of ["storyboard.png", "difference-map.png"]) {
        assertEquals(await head(join(folder, name), 8), PNG_SIGNATURE, `${name} is a PNG`);
      }
      const mp4 = await head(join(folder, "video.mp4"), 8);
      assertEquals(
        new TextDecoder().decode(new Uint8Array(mp4.slice(4, 8))),
        "ftyp",
        "video.mp4 starts with ftyp",
      );

      const events = await Deno.readTextFile(join(folder, "events.md"));
      assertMatch(events, /\| 2 \| click "Show details" \| \d+\.\d{3} s \| \d+ ms \| ok/);
      assertMatch(events, /interaction: click \|[^\n]*Show details/);
      assertMatch(events, /interaction: fill \|[^\n]*Name/);
      assertMatch(events, /console \| log \| details opened/);

      const report = join(folder, "report.html");
      const seen = await openOffline(report);
      assert(seen.storyboardWidth > 0, "the storyboard image decodes");
      assert(seen.differenceWidth > 0, "the difference map image decodes");
      assert(seen.text.includes(url) && seen.text.includes('click "Show details"'), "URL and steps shown");
      const foreign = seen.requests.filter((r) =>
        r !== `file://${report}` && r !== `file://${folder}/video.mp4`
      );
      assertEquals(foreign, [], "no request beyond the report and its video");
      assertEquals(seen.refused, [], "nothing in the page needs what the CSP forbids");

      // Without the video beside it (mailed on its own), the page still shows the storyboard.
      const alone = await Deno.makeTempDir({ prefix: "krometrail-report-alone-" });
      try {
        await Deno.copyFile(report, join(alone, "report.html"));
        const lone = await openOffline(join(alone, "report.html"));
        assert(lone.storyboardWidth > 0, "the storyboard is inline");
      } finally {
        await Deno.remove(alone, { recursive: true });
      }
    } finally {
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test(
  "krometrail record: a failed step exits 1 and still writes the files; bad arguments exit 2; no browser exits 4",
  e2e,
  async () => {
    const site = serveStatic();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-record-data-" });
    const out = await Deno.makeTempDir({ prefix: "krometrail-record-out-" });
    const tmp = await Deno.makeTempDir({ prefix: "krometrail-record-tmp-" });
    try {
      const url = `${site.origin}/record/index.html`;
      // Four runs side by side: the first and the last drive a browser.
      const [failed, bad, none, stopped] = await Promise.all([
        record(
          [url, "--click", "No such control", "--fill", "Name=Ada", "--seconds", "1", "--out", out],
          { KROMETRAIL_DATA_DIR: dataDir },
        ),
        record([url, "--seconds", "soon"], { KROMETRAIL_DATA_DIR: dataDir }),
        record([url, "--seconds", "1", "--out", join(out, "none")], {
          KROMETRAIL_DATA_DIR: dataDir,
          KROMETRAIL_CHROME: "/nonexistent/chromium",
        }),
        recordUntilSigterm([url, "--seconds", "120", "--out", join(out, "stopped")], {
          KROMETRAIL_DATA_DIR: dataDir,
          TMPDIR: tmp,
        }),
      ]);
      assertEquals(failed.code, 1, failed.stderr);
      assertEquals(lastLine(failed.stdout), out);
      assertMatch(failed.stderr, /step 2 failed: click "No such control": locator_no_match/);
      const events = await Deno.readTextFile(join(out, "events.md"));
      assertMatch(events, /\| 2 \| click "No such control" \|[^\n]*\*\*failed\*\* locator_no_match/);
      assertMatch(events, /\| 3 \| fill "Name" with "Ada" \|[^\n]*\*\*skipped\*\*/);
      const html = await Deno.readTextFile(join(out, "report.html"));
      assert(html.includes("1 step failed"), "the report says a step failed");
      assertEquals(
        await head(join(out, "storyboard.png"), 8),
        PNG_SIGNATURE,
        "the storyboard is still drawn",
      );

      assertEquals(bad.code, 2, bad.stderr);
      assertEquals(bad.stdout, "", "nothing on stdout");
      const structuredLine = bad.stderr.split("\n").find((l) => l.startsWith("{"));
      assert(structuredLine, bad.stderr);
      const parsed = JSON.parse(structuredLine) as { error: { code: string; flag: string; message: string } };
      assertEquals(parsed.error.code, "invalid_arguments");
      assertEquals(parsed.error.flag, "--seconds");
      assert(bad.stderr.includes("usage: krometrail record URL"), "usage on stderr");

      assertEquals(none.code, 4, none.stderr);
      assertMatch(none.stderr, /could not start a browser/);
      assertMatch(none.stderr, /krometrail doctor/);
      assert(!existsSync(join(out, "none")), "no empty folder is left when no browser started");

      // SIGTERM mid-recording ends it early like Ctrl-C: the files are written, the profile removed.
      assertEquals(stopped.code, 0, stopped.stderr);
      assertMatch(stopped.stderr, /interrupted; writing what was recorded/);
      assertEquals(lastLine(stopped.stdout), join(out, "stopped"));
      assert((await Deno.readTextFile(join(out, "stopped", "report.html"))).includes(url), "report.html");
      await Deno.stat(join(out, "stopped", "events.md"));
      assertEquals(
        [...Deno.readDirSync(tmp)].map((e) => e.name).filter((n) => n.startsWith(TEMP_PROFILE_PREFIX)),
        [],
        "the temporary profile is removed",
      );
    } finally {
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await Deno.remove(out, { recursive: true }).catch(() => {});
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
);
