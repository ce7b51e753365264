/** Parses the command line with `parse`; a bad argument prints its message and exits with status 2. */
export function argsOrExit<T>(parse: (args: string[]) => T): T {
  try {
    return parse(Deno.args);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    Deno.exit(2);
  }
}
