/**
 * Argument combinations a tool cannot honour together. Each is refused before anything runs, naming
 * both arguments, because silently preferring one of them answers a question the caller did not ask.
 */
import { ToolError } from "../../errors.ts";

export function conflictingArguments(
  first: string,
  second: string,
  why: string,
  recovery: string,
): ToolError {
  return new ToolError({
    code: "conflicting_arguments",
    message: `${first} and ${second} conflict: ${why}`,
    retry: "never",
    recovery,
    affected: { argument: first },
    details: { arguments: [first, second] },
  });
}
