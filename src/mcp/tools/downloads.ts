import type { Tool } from "../define_tool.ts";

/** list_downloads, wait_for_download, read_clipboard, write_clipboard, activate_page, list_frames/assets (issue 5, in progress). */
export const downloadTools: Tool[] = [];
