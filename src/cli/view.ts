import type { AppContext } from "../mcp/context.ts";

/** `krometrail view` (stub). */
export function viewCommand(_app: AppContext, _args: string[]): Promise<number> {
  console.error("krometrail view: not built yet");
  return Promise.resolve(2);
}
