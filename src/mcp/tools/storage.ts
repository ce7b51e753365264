import { z } from "zod";
import type { PageTarget } from "../../browser/targets.ts";
import {
  clearAllCookies,
  contextCookies,
  COOKIE_LIMITS,
  cookieRow,
  deleteCookies,
  matchesFilter,
  setCookie,
  urlCookies,
} from "../../devtools/cookies.ts";
import { serializedOrigin } from "../../devtools/storage_state.ts";
import { loadState, readStateFile, saveState } from "../../devtools/storage_state_io.ts";
import { ToolError } from "../../errors.ts";
import type { Tool } from "../define_tool.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, type ToolOutput } from "../response.ts";
import { pageId } from "../schemas.ts";
import { ACTIONS, httpUrl, lagging, missing, webStorage } from "./web_storage.ts";
import { pageSeesCookies } from "../../devtools/page_agreement.ts";

/** The page's current http(s) URL, for cookie calls that name no URL or domain. */
function pageUrl(page: PageTarget, action: string): string {
  if (serializedOrigin(page.url)) return page.url;
  throw new ToolError({
    code: "invalid_arguments",
    message: `cookies ${action}: page ${page.id} is on ${
      page.url.slice(0, 80) || "no URL"
    }, not an http(s) URL.`,
    retry: "never",
    recovery: "Pass url (or domain and path), or navigate_page to the site first.",
    affected: { page_id: page.id, argument: "url" },
  });
}

/** Rows a list shows unless asked for more: about 170 characters each. */
const DEFAULT_LIST = 50;

const cookieInput = z.strictObject({
  action: z.enum(ACTIONS),
  name: z.string().min(1).max(COOKIE_LIMITS.name).optional(),
  value: z.string().max(COOKIE_LIMITS.value).optional().describe("set"),
  url: httpUrl.optional().describe(
    "set: the URL it belongs to (default the page's)",
  ),
  domain: z.string().min(1).max(253).optional().describe(
    "set: a domain cookie (.example.com); filter otherwise",
  ),
  path: z.string().startsWith("/").max(1024).optional().describe("set: default /; filter otherwise"),
  expires: z.number().int().min(-1).max(253402300799).optional().describe(
    "Unix seconds; -1 or omitted: session",
  ),
  http_only: z.boolean().optional(),
  secure: z.boolean().optional(),
  same_site: z.enum(["Strict", "Lax", "None"]).optional(),
  show_values: z.boolean().optional(),
  max_cookies: z.number().int().min(1).max(COOKIE_LIMITS.list).optional().describe(`Default ${DEFAULT_LIST}`),
  page_id: pageId.optional(),
});

/** save_storage_state and load_storage_state take the same file and page. */
const STATE_FILE_ARGS = {
  path: z.string().min(1).max(4096).describe(
    "Absolute, or relative to the server's cwd",
  ),
  page_id: pageId.optional(),
};

export const storageTools: Tool[] = [
  defineTool({
    name: "cookies",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.cookies,
    description:
      "The session's cookies: list (filter: name, domain, path, or url: those sent to it), get, set, delete (by name, + domain/path) or clear (all or a domain's). Values show as lengths unless show_values.",
    input: cookieInput,
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = session.page(args.page_id);
      const show = args.show_values ?? false;
      const filter = { name: args.name, domain: args.domain, path: args.path };
      const read = async () =>
        (args.url !== undefined ? await urlCookies(page, args.url) : await contextCookies(page))
          .filter((c) => matchesFilter(c, filter));
      const scope = [
        args.name !== undefined ? `name ${JSON.stringify(args.name)}` : "",
        args.domain !== undefined ? `domain ${args.domain}` : "",
        args.path !== undefined ? `path ${args.path}` : "",
        args.url !== undefined ? `sent to ${args.url}` : "",
      ].filter(Boolean).join(", ");
      const line = (c: ReturnType<typeof cookieRow>) =>
        `${c.name}=${c.value} ${c.domain}${c.path}${c.http_only ? " HttpOnly" : ""}${
          c.secure ? " Secure" : ""
        }${c.same_site ? ` SameSite=${c.same_site}` : ""}${
          c.expires === -1 ? " session" : ` expires ${new Date(c.expires * 1000).toISOString()}`
        }`;
      const run = async (): Promise<ToolOutput> => {
        switch (args.action) {
          case "list":
          case "get": {
            if (args.action === "get" && args.name === undefined) throw missing("get", "name", "cookies");
            const all = await read();
            const rows = all.slice(0, args.max_cookies ?? DEFAULT_LIST).map((c) => cookieRow(c, show));
            const omitted = all.length - rows.length;
            const head = args.action === "get"
              ? rows.length === 0
                ? `No cookie named ${JSON.stringify(args.name)}${
                  scope.includes("domain") || args.url ? ` (${scope})` : ""
                }.`
                : `${rows.length} cookie(s) named ${JSON.stringify(args.name)}:`
              : all.length === 0
              ? `No cookies${scope ? ` (${scope})` : " in the session's browser context"}.`
              : `${all.length} cookie(s)${scope ? ` (${scope})` : ""}${
                omitted
                  ? `; first ${rows.length} shown, ${omitted} omitted (max_cookies up to ${COOKIE_LIMITS.list}, or filter)`
                  : ""
              }:`;
            return output([head, ...rows.map(line)].join("\n"), {
              action: args.action,
              page_id: page.id,
              ...(args.action === "get" ? { found: rows.length > 0, cookie: rows[0] ?? null } : {}),
              cookies: rows,
              total_count: all.length,
              omitted_count: omitted,
              values_shown: show,
            });
          }
          case "set": {
            if (args.name === undefined) throw missing("set", "name", "cookies");
            if (args.value === undefined) throw missing("set", "value", "cookies");
            if (args.url !== undefined && args.domain !== undefined) {
              throw new ToolError({
                code: "invalid_arguments",
                message: "cookies set takes url or domain, not both.",
                retry: "never",
                recovery: "Pass url (a host-only cookie of its host) or domain (a domain cookie), not both.",
                affected: { argument: "domain" },
              });
            }
            const url = args.domain === undefined ? args.url ?? pageUrl(page, "set") : undefined;
            const kept = await setCookie(page, { ...args, name: args.name, value: args.value, url });
            const row = cookieRow(kept, show);
            return output(`Set cookie ${line(row)}`, {
              action: "set",
              page_id: page.id,
              cookie: row,
              cookies: [row],
              values_shown: show,
            });
          }
          case "delete": {
            if (args.name === undefined) throw missing("delete", "name", "cookies");
            const doomed = await read();
            await deleteCookies(page, doomed);
            const left = (await contextCookies(page)).filter((c) =>
              doomed.some((d) => d.name === c.name && d.domain === c.domain && d.path === c.path)
            );
            const removed = doomed.map((c) => ({ name: c.name, domain: c.domain, path: c.path }));
            return output(
              removed.length === 0
                ? `No cookie named ${JSON.stringify(args.name)}${
                  scope ? ` (${scope})` : ""
                }; nothing deleted.`
                : `Deleted ${removed.length} cookie(s): ${
                  removed.map((r) => `${r.name} ${r.domain}${r.path}`).join(", ")
                }` +
                  (left.length ? `; ${left.length} still present` : ""),
              {
                action: "delete",
                page_id: page.id,
                removed,
                removed_count: removed.length,
                remaining_count: left.length,
              },
            );
          }
          case "clear": {
            const scoped = args.domain !== undefined || args.url !== undefined || args.name !== undefined ||
              args.path !== undefined;
            const before = scoped ? await read() : await contextCookies(page);
            if (scoped) await deleteCookies(page, before);
            else await clearAllCookies(page);
            const after = scoped ? (await read()).length : (await contextCookies(page)).length;
            return output(
              `Cleared ${before.length - after} cookie(s)${scope ? ` (${scope})` : ""}; ${after} left there.`,
              {
                action: "clear",
                page_id: page.id,
                removed_count: before.length - after,
                remaining_count: after,
              },
            );
          }
        }
      };
      const out = await run();
      if (args.action !== "list" && args.action !== "get" && !await pageSeesCookies(page)) {
        lagging(out, "document.cookie");
      }
      return out;
    },
  }),
  webStorage,
  defineTool({
    name: "save_storage_state",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.save_storage_state,
    description:
      "Save the session's cookies and its open pages' localStorage to a Playwright storage-state JSON file (mode 0600: it holds secrets).",
    input: z.strictObject(STATE_FILE_ARGS),
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = session.page(args.page_id);
      const saved = await saveState(session, page, args.path);
      const origins = saved.origins.map((o) => ({ origin: o.origin, entry_count: o.localStorage.length }));
      const domains = [...new Set(saved.cookies.map((c) => c.domain))];
      return output(
        [
          `Saved ${saved.cookies.length} cookie(s) and localStorage of ${origins.length} origin(s) to ${saved.path} (${saved.bytes} bytes, mode 0600; values not shown).`,
          ...(domains.length
            ? [`Cookie domains: ${domains.slice(0, 20).join(", ")}${domains.length > 20 ? ", …" : ""}`]
            : []),
          ...origins.map((o) =>
            `${o.origin}: ${o.entry_count} localStorage entr${o.entry_count === 1 ? "y" : "ies"}`
          ),
          ...(saved.unread.length ? [`Not readable: ${saved.unread.join(", ")}`] : []),
        ].join("\n"),
        {
          path: saved.path,
          bytes: saved.bytes,
          cookie_count: saved.cookies.length,
          origin_count: origins.length,
          cookie_domains: domains.slice(0, 50),
          origins,
          ...(saved.unread.length ? { unread_origins: saved.unread } : {}),
        },
      );
    },
  }),
  defineTool({
    name: "load_storage_state",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.load_storage_state,
    description:
      "Merge a Playwright storage-state JSON file (or save_storage_state's) into the session: cookies, and each origin's localStorage (at once where a page has it open, else on first visit).",
    input: z.strictObject(STATE_FILE_ARGS),
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = session.page(args.page_id);
      const { path, parsed } = await readStateFile(args.path);
      const loaded = await loadState(session, page, parsed);
      const pending = loaded.origins.filter((o) => o.status === "on_first_visit");
      return output(
        [
          `Loaded ${loaded.cookies_set} of ${parsed.cookies.length} cookie(s) and localStorage of ${loaded.origins.length} origin(s) from ${path}.`,
          ...loaded.origins.map((o) =>
            `${o.origin}: ${o.entries} entr${o.entries === 1 ? "y" : "ies"} ${
              o.status === "written"
                ? `written (page ${o.page_id})`
                : `written when page ${o.page_id} first opens it`
            }`
          ),
          ...loaded.rejected_cookies.map((r) => `Refused cookie ${r.name} (${r.domain}): ${r.reason}`),
          ...(parsed.not_loaded.length
            ? [`Not loaded (unsupported here): ${parsed.not_loaded.join(", ")}`]
            : []),
          ...(pending.length ? ["Navigate the page to those origins to apply their localStorage."] : []),
        ].join("\n"),
        {
          path,
          page_id: page.id,
          cookie_count: loaded.cookies_set,
          origin_count: loaded.origins.length,
          origins: loaded.origins,
          rejected_cookies: loaded.rejected_cookies,
          ...(parsed.not_loaded.length ? { not_loaded: parsed.not_loaded } : {}),
          ...(loaded.lagging.length
            ? {
              warnings: loaded.lagging.map((l) => `page_view_lagging: ${l} did not show the load within 1 s`),
            }
            : {}),
        },
      );
    },
  }),
];
