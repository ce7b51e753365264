import { z } from "zod";
import { shownValue } from "../../devtools/cookies.ts";
import { serializedOrigin } from "../../devtools/storage_state.ts";
import {
  clearItems,
  pageFrames,
  readItems,
  removeItem,
  storageIdFor,
  writeItem,
} from "../../devtools/web_storage.ts";
import { ToolError } from "../../errors.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, type ToolOutput } from "../response.ts";
import { pageSeesStorage } from "../../devtools/page_agreement.ts";
import { pageId } from "../schemas.ts";

/**
 * The change is in the browser's store but the page's own read did not show it within the bound: said,
 * so "the page sees it" is never implied when it did not.
 */
export function lagging(out: ToolOutput, what: string): void {
  const warnings = (out.structured.warnings as string[] | undefined) ?? [];
  warnings.push(
    `page_view_lagging: the page's ${what} did not show the change within 1 s; read it again shortly`,
  );
  out.structured.warnings = warnings;
  out.text += `\nWarning: the page's ${what} did not show the change yet.`;
}

export const ACTIONS = ["list", "get", "set", "delete", "clear"] as const;

export function missing(action: string, field: string, tool: string): ToolError {
  return new ToolError({
    code: "invalid_arguments",
    message: `${tool} ${action} needs ${field}.`,
    retry: "never",
    recovery: `Pass ${field}; nothing was changed.`,
    affected: { argument: field },
    details: { issues: [{ path: field, problem: `required for action "${action}"` }], omitted_issues: 0 },
  });
}

export const httpUrl = z.string().max(4096).refine(
  (u) => serializedOrigin(u) !== undefined,
  "an http(s) URL",
);

const DEFAULT_LIST = 50;
/** Characters of a shown value: a list stays a list, one get shows a large value's head. */
const SHOWN_CAP = { list: 500, get: 20_000 } as const;

function capped(value: string, show: boolean, cap: number): string {
  if (!show) return shownValue(value, false);
  return value.length <= cap ? value : `${value.slice(0, cap)}… <${value.length} chars>`;
}
const STORAGE_LIMITS = { list: 200, key: 1024, value: 1_000_000 } as const;

/** web_storage: one origin's local or session storage, through a frame of it in the page. */
export const webStorage = defineTool({
  name: "web_storage",
  capability: "devtools",
  output: OUTPUT_SCHEMAS.web_storage,
  description:
    "An origin's localStorage or sessionStorage (default: the page's own; others must be framed in it): list, get, set, delete or clear by key. Values show as lengths unless show_values.",
  input: z.strictObject({
    action: z.enum(ACTIONS),
    storage: z.enum(["local", "session"]).optional().describe("Default local"),
    origin: httpUrl.optional(),
    key: z.string().max(STORAGE_LIMITS.key).optional().describe("get, set, delete"),
    value: z.string().max(STORAGE_LIMITS.value).optional().describe("set"),
    show_values: z.boolean().optional(),
    max_entries: z.number().int().min(1).max(STORAGE_LIMITS.list).optional().describe(
      `list: entries shown (default ${DEFAULT_LIST})`,
    ),
    page_id: pageId.optional(),
  }),
  handler: async (args, app) => {
    const session = app.browsers.require();
    const page = session.page(args.page_id);
    const area = args.storage ?? "local";
    const show = args.show_values ?? false;
    let origin = args.origin !== undefined ? serializedOrigin(args.origin) : undefined;
    if (origin === undefined) {
      const main = (await pageFrames(page))[0]?.origin ?? "";
      origin = serializedOrigin(main);
      if (origin === undefined) {
        throw new ToolError({
          code: "origin_not_open",
          message: `Page ${page.id} is on ${
            page.url.slice(0, 80) || "no URL"
          }, which has no web storage origin.`,
          retry: "after_recovery",
          recovery: "navigate_page to the site first, or pass origin of a frame the page has.",
          affected: { page_id: page.id, argument: "origin" },
        });
      }
    }
    const id = await storageIdFor(page, origin, area);
    const base = { action: args.action, origin, storage: area, page_id: page.id };
    const where = `${area}Storage of ${origin}`;
    const needKey = () => {
      if (args.key === undefined) throw missing(args.action, "key", "web_storage");
      return args.key;
    };
    const run = async (): Promise<ToolOutput> => {
      switch (args.action) {
        case "list": {
          const items = await readItems(page, id);
          const rows = items.slice(0, args.max_entries ?? DEFAULT_LIST).map(([key, value]) => ({
            key,
            value: capped(value, show, SHOWN_CAP.list),
            ...(show && value.length > SHOWN_CAP.list ? { length: value.length } : {}),
          }));
          const omitted = items.length - rows.length;
          return output(
            [
              `${items.length} entr${items.length === 1 ? "y" : "ies"} in ${where}${
                omitted
                  ? `; first ${rows.length} shown, ${omitted} omitted (max_entries up to ${STORAGE_LIMITS.list})`
                  : ""
              }:`,
              ...rows.map((r) => `${r.key} = ${r.value}`),
            ].join("\n"),
            { ...base, entries: rows, total_count: items.length, omitted_count: omitted, values_shown: show },
          );
        }
        case "get": {
          const key = needKey();
          const hit = (await readItems(page, id)).find(([k]) => k === key);
          const value = hit ? capped(hit[1], show, SHOWN_CAP.get) : null;
          const cut = show && hit !== undefined && hit[1].length > SHOWN_CAP.get;
          return output(hit ? `${where}: ${key} = ${value}` : `${where} has no key ${JSON.stringify(key)}.`, {
            ...base,
            key,
            found: hit !== undefined,
            value,
            ...(hit ? { length: hit[1].length } : {}),
            ...(cut ? { truncated: true } : {}),
            values_shown: show,
          });
        }
        case "set": {
          const key = needKey();
          if (args.value === undefined) throw missing("set", "value", "web_storage");
          await writeItem(page, id, key, args.value);
          const back = (await readItems(page, id)).find(([k]) => k === key);
          if (back?.[1] !== args.value) {
            throw new ToolError({
              code: "storage_write_failed",
              message:
                `${where}: ${key} did not keep the value written (quota, or the page changed it at once).`,
              retry: "safe",
              recovery: "Retry; for large values check the origin's quota (about 5 MB per origin).",
              affected: { page_id: page.id, argument: "value" },
            });
          }
          return output(`Set ${key} in ${where} (${args.value.length} chars).`, {
            ...base,
            key,
            value: shownValue(args.value, show),
            values_shown: show,
          });
        }
        case "delete": {
          const key = needKey();
          const had = (await readItems(page, id)).some(([k]) => k === key);
          if (had) await removeItem(page, id, key);
          return output(
            had
              ? `Deleted ${key} from ${where}.`
              : `${where} has no key ${JSON.stringify(key)}; nothing deleted.`,
            {
              ...base,
              key,
              removed: had,
            },
          );
        }
        case "clear": {
          const count = (await readItems(page, id)).length;
          await clearItems(page, id);
          const left = (await readItems(page, id)).length;
          return output(`Cleared ${count - left} entr${count - left === 1 ? "y" : "ies"} from ${where}.`, {
            ...base,
            removed_count: count - left,
            remaining_count: left,
          });
        }
      }
    };
    const out = await run();
    if (args.action === "set" || args.action === "delete" || args.action === "clear") {
      const entries = await readItems(page, id);
      if (!await pageSeesStorage(page, origin, area, entries)) lagging(out, `${area}Storage`);
    }
    return out;
  },
});
