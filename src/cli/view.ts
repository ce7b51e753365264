/**
 * `krometrail view [URL] [--headless]`: starts this process's evidence viewer and prints its URL on
 * stdout (one line). With a URL it also opens a browser on it (headed unless --headless or
 * KROMETRAIL_HEADLESS=1) so a person can drive the page and watch it recorded live. Runs until
 * Ctrl-C or SIGTERM; progress goes to stderr.
 */
import type { AppContext } from "../mcp/context.ts";
import { toolRunner } from "../mcp/tool_runner.ts";

const USAGE = "usage: krometrail view [URL] [--headless]";

function parse(args: string[]): { url?: string; headless: boolean } | string {
  let url: string | undefined;
  let headless = Deno.env.get("KROMETRAIL_HEADLESS") === "1";
  for (const a of args) {
    if (a === "--headless") headless = true;
    else if (a === "--help" || a === "-h") return USAGE;
    else if (a.startsWith("-")) return `krometrail view: unknown option ${a}\n${USAGE}`;
    else if (url !== undefined) return `krometrail view: one URL at most\n${USAGE}`;
    else url = a;
  }
  if (url !== undefined) {
    try {
      const u = new URL(url);
      if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "file:") throw new Error();
    } catch {
      return `krometrail view: not an http(s) or file URL: ${url.slice(0, 200)}`;
    }
  }
  return { url, headless };
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const signals = ["SIGINT", "SIGTERM"] as const;
    const handlers = signals.map((s) => {
      const h = () => {
        signals.forEach((t, i) => Deno.removeSignalListener(t, handlers[i]));
        resolve(s);
      };
      Deno.addSignalListener(s, h);
      return h;
    });
  });
}

export async function viewCommand(app: AppContext, args: string[]): Promise<number> {
  const opts = parse(args);
  if (typeof opts === "string") {
    console.error(opts);
    return opts === USAGE ? 0 : 2;
  }
  const stopped = untilSignal();
  let viewer;
  try {
    viewer = await app.viewer.ensure();
  } catch (err) {
    console.error(`krometrail view: the viewer could not start: ${(err as Error).message}`);
    return 1;
  }
  let line = viewer.url;
  if (opts.url) {
    const runTool = toolRunner(app);
    const run = async (name: string, toolArgs: Record<string, unknown>) => {
      const out = await runTool(name, toolArgs);
      if (out.isError) throw new Error(out.text.split("\n").slice(0, 3).join(" "));
      return out;
    };
    try {
      console.error(`krometrail view: starting ${opts.headless ? "headless" : "headed"} browser…`);
      const started = await run("start_browser", { headless: opts.headless });
      console.error(`krometrail view: opening ${opts.url}`);
      await run("navigate_page", { url: opts.url });
      const session = typeof started.structured.session_id === "string"
        ? started.structured.session_id
        : undefined;
      if (session) line = viewer.link({ session_id: session });
    } catch (err) {
      console.error(`krometrail view: ${(err as Error).message}`);
      return 1;
    }
  }
  console.log(line);
  console.error(
    `krometrail view: the viewer is serving on ${viewer.origin} (this URL is its key); Ctrl-C to stop.`,
  );
  const signal = await stopped;
  console.error(`krometrail view: ${signal}, stopping`);
  return 0;
}
