import type { Tool } from "../define_tool.ts";

/** wait and batch (issue 5, in progress). */
export const flowTools: Tool[] = [];
