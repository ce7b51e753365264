import type { AppContext } from "../mcp/context.ts";

/** `krometrail record URL` (stub). */
export function recordCommand(_app: AppContext, _args: string[]): Promise<number> {
  console.error("krometrail record: not built yet");
  return Promise.resolve(2);
}
