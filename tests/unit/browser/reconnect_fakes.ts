/** Helpers shared by the reconnector and page-registry re-adoption tests. */

export async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
