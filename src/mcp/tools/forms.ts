import type { Tool } from "../define_tool.ts";

export const formTools: Tool[] = [];
