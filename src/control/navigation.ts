import type { PageTarget } from "../browser/targets.ts";
import { phase } from "../phase_timing.ts";
import { ToolError } from "../errors.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { addLine, type Observation } from "./observation.ts";
import type { Postconditions } from "./postconditions.ts";
import { storedUrl } from "../browser/url_redaction.ts";
import type { Config } from "../config.ts";

const ALLOWED_SCHEMES = ["http:", "https:", "file:", "about:", "data:"];

/**
 * A URL a tool may send the browser to: absolute, of an allowed scheme, and not file:// when the
 * operator turned local files off (file:// reads with the operator's own filesystem authority).
 */
export function navigableUrl(raw: string, config: Pick<Config, "allowFileUrls">): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError({
      code: "invalid_url",
      message: `${JSON.stringify(raw.slice(0, 200))} is not an absolute URL.`,
      retry: "never",
      recovery: "Pass a full URL such as http://127.0.0.1:3000/ (scheme included).",
      affected: { argument: "url" },
    });
  }
  if (!ALLOWED_SCHEMES.includes(url.protocol)) {
    throw new ToolError({
      code: "invalid_url",
      message: `URL scheme ${url.protocol} is not allowed.`,
      retry: "never",
      recovery: `Use one of ${ALLOWED_SCHEMES.join(" ")}.`,
      affected: { argument: "url" },
    });
  }
  if (url.protocol === "file:" && !config.allowFileUrls) {
    throw new ToolError({
      code: "file_urls_disabled",
      message: "file:// navigation is turned off for this server (KROMETRAIL_ALLOW_FILE_URLS=0).",
      retry: "never",
      recovery:
        "Serve the file over http (e.g. python3 -m http.server on 127.0.0.1), or restart the server without KROMETRAIL_ALLOW_FILE_URLS=0.",
      affected: { argument: "url" },
      details: { variable: "KROMETRAIL_ALLOW_FILE_URLS", value: "0" },
    });
  }
  return url.href;
}

export type NavigationOp = "navigate" | "reload" | "back" | "forward";

export async function navigation(
  env: ActionEnv,
  op: NavigationOp,
  opts: { url?: string; timeoutMs: number; waitUntil: "load" | "none"; ignoreCache?: boolean },
  pageId?: string,
) {
  // A new document gives a crashed renderer a new process (Page.reload works on a crashed target); history
  // moves are refused like any other page-scoped tool, since the crash guidance names only these two.
  const recovers = op === "navigate" || op === "reload";
  const page = usablePage(env.session.page(pageId, recovers ? { crashed: "allow" } : undefined));
  const operation = op === "navigate"
    ? "navigate_page"
    : op === "reload"
    ? "reload_page"
    : op === "back"
    ? "go_back"
    : "go_forward";
  let historyEntry: number | undefined;
  if (op === "back" || op === "forward") {
    const history = await page.send("Page.getNavigationHistory");
    const index = history.currentIndex + (op === "back" ? -1 : 1);
    const entry = history.entries[index];
    if (!entry) {
      throw new ToolError({
        code: "no_history_entry",
        message: `Page ${page.id} has no ${op === "back" ? "previous" : "next"} history entry.`,
        retry: "never",
        recovery: "Use navigate_page with a URL instead.",
        affected: { page_id: page.id },
      });
    }
    historyEntry = entry.id;
  }
  // The record (persisted, and echoed at expanded detail) keeps the stored form; the browser gets the real URL.
  const stored = op === "navigate" ? storedUrl(opts.url ?? "about:blank") : undefined;
  const params = stored ? { url: stored.url } : {};
  const observation = await interact(env, page, operation, params, async () => {
    if (op === "navigate") {
      const { loaded } = await env.session.navigate(
        page,
        opts.url ?? "about:blank",
        opts.waitUntil,
        opts.timeoutMs,
      );
      if (!loaded && opts.waitUntil === "load") throw navigationTimeout(page, opts.timeoutMs);
      return;
    }
    const loaderBefore = page.loaderId;
    if (op === "reload") await page.send("Page.reload", { ignoreCache: opts.ignoreCache ?? false });
    else await page.send("Page.navigateToHistoryEntry", { entryId: historyEntry as number });
    if (opts.waitUntil === "none") return;
    // History moves may stay within the document (no new loader); only wait when a load is coming.
    await new Promise((r) => setTimeout(r, 30));
    if (page.loading || page.loaderId !== loaderBefore || op === "reload") {
      const loaded = await page.waitForLoad(
        page.loaderId !== loaderBefore ? page.loaderId : undefined,
        opts.timeoutMs,
      );
      if (!loaded) throw navigationTimeout(page, opts.timeoutMs);
    }
  });
  await phase("http_status", () => noteHttpStatus(page, observation));
  // Every stored path is hashed, so a URL with nothing else to drop says nothing (a lean response);
  // the parts that usually carry credentials earn the field and a line.
  const notable = stored?.redacted.filter((p) => p !== "path").map((p) => PART_WORDS[p] ?? p) ?? [];
  if (stored && notable.length > 0) {
    observation.structured.url_redacted = stored.redacted;
    addLine(observation, `the recorded URL keeps no ${notable.join(", ")}; the browser has the full URL`);
  }
  return observation;
}

const PART_WORDS: Record<string, string> = {
  userinfo: "userinfo",
  query: "query values",
  fragment: "fragment",
  opaque: "contents (opaque URL)",
  invalid: "text (unparseable URL)",
};

const RESPONSE_STATUS = `performance.getEntriesByType("navigation")[0]?.responseStatus ?? 0`;

/**
 * A document that arrived with an HTTP error status (a 404 or 500 page) still loads, so the action
 * looks fine; its status goes into `navigation.http_status` with one note. One round trip, only
 * after an action that brought a new http(s) document.
 */
export async function noteHttpStatus(page: PageTarget, observation: Observation): Promise<void> {
  const nav = observation.structured.navigation as Record<string, unknown> | undefined;
  if (nav?.new_document !== true || page.dialog || page.closed || !/^https?:/.test(page.url)) return;
  const r = await page.send("Runtime.evaluate", { expression: RESPONSE_STATUS, returnByValue: true }, 2_000)
    .catch(() => undefined);
  const status = r?.result.value;
  if (typeof status !== "number" || status < 400) return;
  nav.http_status = status;
  const note = `The server answered HTTP ${status}${
    HTTP_REASONS[status] ? ` (${HTTP_REASONS[status]})` : ""
  }; the page shows that error response, not the requested content.`;
  const pc = observation.structured.postconditions as Postconditions | undefined;
  if (pc && !pc.note) pc.note = note;
  addLine(observation, `HTTP ${status}: ${note}`);
}

const HTTP_REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  410: "Gone",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

function navigationTimeout(page: PageTarget, timeoutMs: number): ToolError {
  return new ToolError({
    code: "navigation_timeout",
    message: `The page did not finish loading within ${timeoutMs} ms.`,
    retry: "safe",
    recovery: 'Raise timeout_ms, or pass wait_until: "none" and check the page with snapshot_page.',
    affected: { page_id: page.id },
    details: { timeout_ms: timeoutMs },
  });
}
