/** Minimal assertions (jsr:@std/assert is unreachable here); messages say what differed. */
export class AssertionError extends Error {
  override name = "AssertionError";
}

export function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new AssertionError(message);
}

function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
  );
}

export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) {
    throw new AssertionError(
      `${message ? message + ": " : ""}expected ${e?.slice(0, 2000)}, got ${a?.slice(0, 2000)}`,
    );
  }
}

export function assertMatch(actual: string, pattern: RegExp, message?: string): void {
  if (!pattern.test(actual)) {
    throw new AssertionError(
      `${message ? message + ": " : ""}${JSON.stringify(actual.slice(0, 2000))} does not match ${pattern}`,
    );
  }
}

export async function assertRejects(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  errorClass: new (...args: any[]) => Error = Error,
  includes?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof errorClass)) {
      throw new AssertionError(`expected ${errorClass.name}, got ${String(err)}`);
    }
    if (includes && !err.message.includes(includes)) {
      throw new AssertionError(
        `error ${JSON.stringify(err.message)} does not include ${JSON.stringify(includes)}`,
      );
    }
    return err;
  }
  throw new AssertionError("expected the call to reject");
}

export function assertThrows(fn: () => unknown, includes?: string): Error {
  try {
    fn();
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    if (includes && !e.message.includes(includes)) {
      throw new AssertionError(
        `error ${JSON.stringify(e.message)} does not include ${JSON.stringify(includes)}`,
      );
    }
    return e;
  }
  throw new AssertionError("expected the call to throw");
}
