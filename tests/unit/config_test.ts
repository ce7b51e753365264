import { assertEquals, assertThrows } from "../assert.ts";
import { loadConfig } from "../../src/config.ts";

Deno.test("defaults follow the spec", () => {
  const c = loadConfig((k) => ({ HOME: "/home/u" } as Record<string, string>)[k]);
  assertEquals(c.diskBudgetBytes, 10_000_000_000);
  assertEquals(c.retentionMaxAgeSecs, 7 * 24 * 3600);
  assertEquals(c.headless, false);
  assertEquals(c.dataDir.endsWith("krometrail"), true);
});

Deno.test("environment overrides and validation", () => {
  const env: Record<string, string> = {
    KROMETRAIL_DATA_DIR: "/data",
    KROMETRAIL_DISK_BUDGET_BYTES: "1000",
    KROMETRAIL_RETENTION_MAX_AGE_SECS: "0",
    KROMETRAIL_HEADLESS: "1",
    CHROME_BIN: "/c",
  };
  const c = loadConfig((k) => env[k]);
  assertEquals([c.dataDir, c.diskBudgetBytes, c.retentionMaxAgeSecs, c.headless, c.chromeSource], [
    "/data",
    1000,
    0,
    true,
    "CHROME_BIN",
  ]);
  assertThrows(
    () => loadConfig((k) => (k === "KROMETRAIL_DISK_BUDGET_BYTES" ? "-5" : undefined)),
    "non-negative",
  );
});
