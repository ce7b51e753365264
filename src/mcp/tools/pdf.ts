import type { Tool } from "../define_tool.ts";

export const pdfTools: Tool[] = [];
