import type { Tool } from "../define_tool.ts";

/** open_viewer (stub until the viewer lands). */
export const viewerTools: Tool[] = [];
