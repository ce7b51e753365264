import type { Tool } from "../define_tool.ts";

/** hover, drag, scroll, select_option, upload_files (issue 5, in progress). */
export const interactionTools: Tool[] = [];
