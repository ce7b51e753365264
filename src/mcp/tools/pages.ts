import { z } from "zod";
import { navigableUrl, navigation } from "../../control/navigation.ts";
import { ToolError } from "../../errors.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { observationOutput, output } from "../response.ts";
import { detail, inlineImages, pageId } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";
import { actionEnv } from "./action_env.ts";

/** Advertised without its meaning and default, which CONVENTIONS tells once. */
const timeoutMs = advertiseAs(
  z.number().int().min(100).max(120_000).describe("Load timeout; default 30000"),
  {
    type: "integer",
    minimum: 100,
    maximum: 120_000,
  },
);
const waitUntil = z.enum(["load", "none"]).describe("Wait for load (default) or return at commit");
const observed = {
  page_id: pageId.optional(),
  detail: detail.optional(),
  inline_images: inlineImages.optional(),
};

export const pageTools = [
  defineTool({
    name: "list_pages",
    capability: "control",
    output: OUTPUT_SCHEMAS.list_pages,
    description: "Open pages with ids, URLs, titles, openers and dialog state.",
    input: z.strictObject({}),
    annotations: { readOnlyHint: true },
    handler: (_args, app) => {
      const s = app.browsers.require();
      const targets = [...s.pages.values()];
      const pages = targets.map((p) => p.describe(p.id === s.selectedPageId));
      const text = targets.map((p) =>
        `${p.id === s.selectedPageId ? "*" : " "} ${p.id} ${JSON.stringify(p.title)} ${p.url}${
          p.openerPageId ? ` (opened by ${p.openerPageId})` : ""
        }${p.crash ? ` CRASHED (${p.crash.status}): reload_page or close_page it` : ""}`
      ).join("\n");
      return Promise.resolve(output(text || "No pages.", { pages, selected_page_id: s.selectedPageId }));
    },
  }),
  defineTool({
    name: "create_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.create_page,
    description: "Open a new page (tab), optionally at a URL, and select it.",
    input: z.strictObject({ url: z.string().max(8_192).optional(), background: z.boolean().optional() }),
    handler: async (args, app) => {
      const s = app.browsers.require();
      const page = await s.createPage(
        args.url ? navigableUrl(args.url, app.config) : "about:blank",
        args.background ?? false,
      );
      s.selectedPageId = page.id;
      return output(`Created and selected ${page.id} ${page.url}`, page.describe(true));
    },
  }),
  defineTool({
    name: "select_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.select_page,
    description: "Make a page the default target of page-scoped tools.",
    input: z.strictObject({ page_id: pageId }),
    handler: async (args, app) => {
      const s = app.browsers.require();
      // A crashed page can be selected: the reload that recovers it may then omit page_id.
      const page = s.page(args.page_id, { crashed: "allow" });
      s.selectedPageId = page.id;
      await s.activate(page);
      return output(`Selected ${page.id} ${page.url}`, page.describe(true));
    },
  }),
  defineTool({
    name: "close_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.close_page,
    description: "Close a page (default: the selected one).",
    input: z.strictObject({ page_id: pageId.optional() }),
    annotations: { destructiveHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      const page = s.page(args.page_id, { crashed: "allow" });
      if (s.pages.size === 1) {
        throw new ToolError({
          code: "last_page",
          message: "Refusing to close the last page: that would end the browser session.",
          retry: "never",
          recovery: "Use stop_browser to end the session, or create_page first.",
          affected: { page_id: page.id },
        });
      }
      await s.closePage(page);
      return output(`Closed ${page.id}; selected ${s.selectedPageId}`, {
        closed_page_id: page.id,
        selected_page_id: s.selectedPageId,
      });
    },
  }),
  defineTool({
    name: "navigate_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.navigate_page,
    description: "Navigate a page to a URL.",
    input: z.strictObject({
      url: z.string().max(8_192),
      wait_until: waitUntil.optional(),
      timeout_ms: timeoutMs.optional(),
      ...observed,
    }),
    handler: async (args, app) => {
      const url = navigableUrl(args.url, app.config);
      const obs = await navigation(actionEnv(app, args), "navigate", {
        url,
        timeoutMs: args.timeout_ms ?? 30_000,
        waitUntil: args.wait_until ?? "load",
      }, args.page_id);
      return observationOutput(obs);
    },
  }),
  defineTool({
    name: "reload_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.reload_page,
    description: "Reload a page.",
    input: z.strictObject({
      ignore_cache: z.boolean().optional(),
      timeout_ms: timeoutMs.optional(),
      ...observed,
    }),
    handler: async (args, app) =>
      observationOutput(
        await navigation(actionEnv(app, args), "reload", {
          timeoutMs: args.timeout_ms ?? 30_000,
          waitUntil: "load",
          ignoreCache: args.ignore_cache,
        }, args.page_id),
      ),
  }),
  defineTool({
    name: "go_back",
    capability: "control",
    output: OUTPUT_SCHEMAS.go_back,
    description: "Go back one history entry.",
    input: z.strictObject({ timeout_ms: timeoutMs.optional(), ...observed }),
    handler: async (args, app) =>
      observationOutput(
        await navigation(actionEnv(app, args), "back", {
          timeoutMs: args.timeout_ms ?? 30_000,
          waitUntil: "load",
        }, args.page_id),
      ),
  }),
  defineTool({
    name: "go_forward",
    capability: "control",
    output: OUTPUT_SCHEMAS.go_forward,
    description: "Go forward one history entry.",
    input: z.strictObject({ timeout_ms: timeoutMs.optional(), ...observed }),
    handler: async (args, app) =>
      observationOutput(
        await navigation(actionEnv(app, args), "forward", {
          timeoutMs: args.timeout_ms ?? 30_000,
          waitUntil: "load",
        }, args.page_id),
      ),
  }),
];
