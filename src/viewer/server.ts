import type { AppContext } from "../mcp/context.ts";
import type { RunningViewer } from "./slot.ts";

/** Serves the evidence viewer on 127.0.0.1 (stub: built by issue 16's viewer work). */
export function startViewer(_app: AppContext): Promise<RunningViewer> {
  return Promise.reject(new Error("the evidence viewer is not built yet"));
}
