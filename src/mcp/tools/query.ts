import type { Tool } from "../define_tool.ts";

/** query_page (issue 5, in progress). */
export const queryTools: Tool[] = [];
