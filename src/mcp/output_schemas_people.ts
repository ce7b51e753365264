/**
 * structuredContent of the viewer capability's tools (see output_schemas.ts for the rules: key fields
 * only, every object open). Each tool's owner keeps its entry true to its results.
 */
import { z } from "zod";

const str = z.string();
const num = z.number();

export const PEOPLE_OUTPUT_SCHEMAS = {
  open_viewer: z.looseObject({ url: str }),
  ask_human: z.looseObject({
    status: z.enum(["answered", "pending"]),
    ticket: str,
    choice: str.optional(),
    marked_time_ms: num.nullable().optional(),
    marker_id: str.nullable().optional(),
    viewer_url: str.optional(),
  }),
};
