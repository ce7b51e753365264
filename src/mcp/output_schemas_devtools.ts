/**
 * structuredContent of the devtools capability's tools and fill_form (see output_schemas.ts for the
 * rules: key fields only, every object open). Each tool's owner keeps its entry true to its results.
 */
import { z } from "zod";

const str = z.string();
const num = z.number();
const bool = z.boolean();
const obj = z.looseObject({});
const list = z.array(z.unknown());

export const DEVTOOLS_OUTPUT_SCHEMAS = {
  get_network_request: z.looseObject({
    request_id: str,
    page_id: str,
    method: str,
    url: str,
    status: num.nullable(),
    state: str,
    timing: obj.nullable(),
    sizes: obj,
    initiator: obj,
    request_headers: list,
    response_headers: list,
    redacted_headers: list,
    body: obj.optional(),
  }),
  emulate: z.looseObject({ page_id: str, emulation: obj, changed: obj, summary: str }),
  cookies: z.looseObject({ action: str, page_id: str, cookies: list.optional() }),
  web_storage: z.looseObject({ action: str, origin: str, storage: str, page_id: str }),
  save_storage_state: z.looseObject({
    path: str,
    bytes: num,
    cookie_count: num,
    origin_count: num,
    origins: list,
  }),
  load_storage_state: z.looseObject({
    path: str,
    page_id: str,
    cookie_count: num,
    origin_count: num,
    origins: list,
    rejected_cookies: list,
  }),
  route_requests: z.looseObject({ route: obj }),
  list_routes: z.looseObject({ routes: list }),
  unroute: z.looseObject({ removed: list }),
  measure_performance: z.looseObject({
    status: z.enum(["recording", "measured"]),
    mode: str,
    page_id: str,
    cls: z.looseObject({ score: num, shifts: list }).optional(),
    long_tasks: list.optional(),
    insights: list.optional(),
    trace: z.looseObject({ uri: str, mime_type: str, bytes: num }).optional(),
  }),
  fill_form: z.looseObject({
    status: str,
    interaction_id: str,
    fields: z.array(z.looseObject({ index: num, interaction_id: str, kind: str, target: obj })),
  }),
  save_pdf: z.looseObject({ page_id: str, uri: str, mime_type: str, bytes: num, headless: bool }),
} satisfies Record<string, z.ZodObject>;
