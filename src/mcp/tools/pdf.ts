import { z } from "zod";
import { cdpMessage } from "../../browser/cdp.ts";
import { usablePage } from "../../control/interaction.ts";
import { decodeBase64 } from "../../control/observation.ts";
import {
  badPageRanges,
  isPdf,
  paperSize,
  pdfPageCount,
  pdfRequiresHeadless,
  printParams,
  sessionHeadless,
} from "../../devtools/pdf.ts";
import { ToolError } from "../../errors.ts";
import type { Tool } from "../define_tool.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";

const PRINT_MS = 15_000;
const inches = z.number().min(1).max(100);

export const pdfTools: Tool[] = [
  defineTool({
    name: "save_pdf",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.save_pdf,
    description: "Print the page to PDF (headless sessions only) as an evidence resource.",
    input: z.strictObject({
      page_id: pageId.optional(),
      landscape: z.boolean().optional(),
      print_background: z.boolean().optional().describe("Print background colors and images (default false)"),
      scale: z.number().min(0.1).max(2).optional().describe("Default 1"),
      paper: advertiseAs(
        z.union([
          z.enum(["letter", "a4"]),
          z.strictObject({ width_in: inches, height_in: inches }),
        ]),
        { type: ["string", "object"], description: "letter (default), a4 or {width_in, height_in}" },
      ).optional(),
      page_ranges: z.string().min(1).max(200).regex(/^[\d\s,-]+$/, "pages and ranges like 1-3, 5").optional()
        .describe("e.g. 1-3, 5"),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = usablePage(session.page(args.page_id));
      if (!await sessionHeadless(session, page)) {
        throw pdfRequiresHeadless(session.mode, session.browserVersion);
      }
      const printed = await page.send("Page.printToPDF", printParams(args), PRINT_MS).catch((err) => {
        const message = cdpMessage(err);
        if (args.page_ranges !== undefined && /range/i.test(message)) {
          throw badPageRanges(args.page_ranges, message);
        }
        if (/not implemented|not supported/i.test(message)) {
          throw pdfRequiresHeadless(session.mode, session.browserVersion);
        }
        throw new ToolError({
          code: "pdf_failed",
          message: `The browser could not print the page: ${message}`,
          retry: "safe",
          recovery: "Retry; if it persists, reload the page.",
          affected: { page_id: page.id },
        });
      });
      const bytes = decodeBase64(printed.data);
      if (!isPdf(bytes)) {
        throw new ToolError({
          code: "pdf_failed",
          message: `The browser's printout is not a PDF (${bytes.length} bytes).`,
          retry: "safe",
          recovery: "Retry; if it persists, reload the page.",
          affected: { page_id: page.id },
        });
      }
      const saved = await app.store.writeEvidence("pdfs", "pdf", bytes);
      const pages = pdfPageCount(bytes);
      const paper = paperSize(args.paper);
      const structured = {
        page_id: page.id,
        uri: saved.uri,
        mime_type: "application/pdf",
        bytes: saved.bytes,
        ...(pages !== undefined ? { page_count: pages } : {}),
        paper: {
          ...paper,
          name: typeof args.paper === "string" ? args.paper : args.paper ? "custom" : "letter",
        },
        landscape: args.landscape ?? false,
        headless: true,
      };
      return output(
        `PDF of ${page.id} (${
          pages ?? "?"
        } page(s), ${saved.bytes} bytes, ${paper.width_in}x${paper.height_in} in${
          structured.landscape ? " landscape" : ""
        }) ${saved.uri}`,
        structured,
      );
    },
  }),
];
