import { z } from "zod";
import {
  activatePage,
  CLIPBOARD_TEXT_LIMIT,
  readClipboard,
  writeClipboard,
} from "../../browser/clipboard.ts";
import type { DownloadRow } from "../../browser/downloads.ts";
import { interact, usablePage } from "../../control/interaction.ts";
import { ToolError } from "../../errors.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { observationOutput, output } from "../response.ts";
import { detail, inlineImages, pageId } from "../schemas.ts";
import { actionEnv } from "./action_env.ts";

const DOWNLOADS_SHOWN = { concise: 10, expanded: 50, full: Number.MAX_SAFE_INTEGER };
const observed = {
  page_id: pageId.optional(),
  detail: detail.optional(),
  inline_images: inlineImages.optional(),
};

function downloadLine(d: DownloadRow): string {
  const size = d.total_bytes ? `${d.bytes}/${d.total_bytes}` : `${d.bytes}`;
  return `${d.download_id} ${d.state} ${JSON.stringify(d.suggested_filename)} ${size} B${
    d.page_id ? ` on ${d.page_id}` : ""
  } ${d.url}${d.uri ? ` -> ${d.uri}` : ""}`;
}

/** list_downloads, wait_for_download, read_clipboard, write_clipboard, activate_page. */
export const downloadTools: Tool[] = [
  defineTool({
    name: "list_downloads",
    capability: "control",
    output: OUTPUT_SCHEMAS.list_downloads,
    description:
      "Downloads of this session (newest last) and a cursor; completed managed downloads carry a resource URI.",
    input: z.strictObject({ detail: detail.optional() }),
    annotations: { readOnlyHint: true },
    handler: (args, app) => {
      const s = app.browsers.require();
      const all = s.downloads.list();
      const shown = all.slice(-DOWNLOADS_SHOWN[args.detail ?? "concise"]);
      const structured = {
        downloads: shown,
        cursor: s.downloads.cursor,
        total: all.length,
        omitted: all.length - shown.length,
        observation: s.downloads.unavailable ? "unavailable" : "active",
        files: s.downloads.keepsFiles ? "session_resources" : "browser_managed",
        ...(s.downloads.unavailable ? { unavailable_reason: s.downloads.unavailable } : {}),
      };
      const lines = [`cursor ${s.downloads.cursor}; ${all.length} download(s)`, ...shown.map(downloadLine)];
      if (structured.omitted > 0) {
        lines.push(`(${structured.omitted} older omitted; detail expanded/full shows more)`);
      }
      return Promise.resolve(output(lines.join("\n"), structured));
    },
  }),
  defineTool({
    name: "wait_for_download",
    capability: "control",
    output: OUTPUT_SCHEMAS.wait_for_download,
    description:
      "Wait for a download that began after the cursor `after` (from list_downloads) to finish; returns its row.",
    input: z.strictObject({
      after: z.number().int().min(0).max(1_000_000_000),
      timeout_ms: z.number().int().min(100).max(120_000).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      const timeout = args.timeout_ms ?? 30_000;
      const row = await s.downloads.waitFor(args.after, timeout);
      s.assertLive();
      if (!row) {
        const running = s.downloads.inProgressAfter(args.after);
        throw new ToolError({
          code: "download_timeout",
          message:
            `No download that began after cursor ${args.after} finished within ${timeout} ms (${running} still running).`,
          retry: "safe",
          recovery: running > 0
            ? "The download is still running: call wait_for_download again with the same after cursor and a longer timeout_ms."
            : "Nothing started downloading: trigger the download (e.g. click its link), then wait again with the same after cursor.",
          details: {
            after: args.after,
            cursor: s.downloads.cursor,
            timeout_ms: timeout,
            in_progress: running,
          },
        });
      }
      return output(downloadLine(row), { download: row, cursor: s.downloads.cursor });
    },
  }),
  defineTool({
    name: "read_clipboard",
    capability: "control",
    output: OUTPUT_SCHEMAS.read_clipboard,
    description: "Read the page clipboard's text (explicit request only; up to 100000 characters).",
    input: z.strictObject({ page_id: pageId.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const page = usablePage(app.browsers.require().page(args.page_id));
      const clip = await readClipboard(page);
      return output(
        `${clip.length} character(s)${
          clip.truncated ? ` (first ${clip.text.length} shown)` : ""
        }:\n${clip.text}`,
        { page_id: page.id, ...clip },
      );
    },
  }),
  defineTool({
    name: "write_clipboard",
    capability: "control",
    output: OUTPUT_SCHEMAS.write_clipboard,
    description: "Write text to the page clipboard, confirmed by reading it back.",
    input: z.strictObject({ text: z.string().max(CLIPBOARD_TEXT_LIMIT), ...observed }),
    handler: async (args, app) => {
      const env = actionEnv(app, args);
      const page = usablePage(env.session.page(args.page_id));
      // The record keeps the text's length, never the text; the outcome joins it once confirmed.
      const params: Record<string, unknown> = { text_chars: args.text.length };
      const obs = await interact(env, page, "write_clipboard", params, async () => {
        params.clipboard_write = await writeClipboard(page, args.text);
      });
      const outcome = params.clipboard_write as { confirmed: boolean } | undefined;
      obs.structured.clipboard_write = outcome;
      obs.text = `clipboard write ${
        outcome?.confirmed ? "confirmed" : "NOT confirmed (read-back differs)"
      }\n${obs.text}`;
      return observationOutput(obs);
    },
  }),
  defineTool({
    name: "activate_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.activate_page,
    description:
      "Bring a page to the foreground once (even under focus preserve), leaving the selection; returns an image.",
    input: z.strictObject(observed),
    handler: async (args, app) => {
      // Stale-prone: the page may not have painted while hidden, so one image by default (spec).
      const env = actionEnv(app, args, true);
      const page = usablePage(env.session.page(args.page_id));
      return observationOutput(await interact(env, page, "activate_page", {}, () => activatePage(page)));
    },
  }),
];
