import { z } from "zod";
import { dialogOpen } from "../../control/interaction.ts";
import { pageForTarget } from "../../control/targeting.ts";
import { runQuery } from "../../snapshot/query_page.ts";
import { presentQuery } from "../../snapshot/query_present.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { detail, locator, pageId } from "../schemas.ts";

export const queryTools: Tool[] = [
  defineTool({
    name: "query_page",
    capability: "control",
    output: OUTPUT_SCHEMAS.query_page,
    description:
      "Resolve a semantic locator: unique (with its ref), no_match, ambiguous or truncated (never a ref).",
    input: z.strictObject({ locator, page_id: pageId.optional(), detail: detail.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.require();
      // A scope ref names its own page; page_id, when given too, must agree with it.
      const page = args.locator.scope === undefined
        ? s.page(args.page_id)
        : pageForTarget(s, { ref: args.locator.scope }, args.page_id);
      if (page.dialog) throw dialogOpen(page);
      const run = await runQuery(s, page, args.locator);
      const presented = presentQuery(run, args.locator, page.id, args.detail ?? "concise");
      return output(presented.text, presented.structured);
    },
  }),
];
