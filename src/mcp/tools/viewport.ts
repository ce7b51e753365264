import type { Tool } from "../define_tool.ts";

/** set_viewport (issue 5, in progress). */
export const viewportTools: Tool[] = [];
