import type { Tool } from "../define_tool.ts";

/** ask_human (stub until it lands). */
export const askHumanTools: Tool[] = [];
