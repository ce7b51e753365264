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

Deno.test("authority settings: file URLs on by default, an upload root must be absolute", () => {
  const none = loadConfig(() => undefined);
  assertEquals([none.allowFileUrls, none.uploadRoot], [true, undefined]);
  const env: Record<string, string> = {
    KROMETRAIL_ALLOW_FILE_URLS: "0",
    KROMETRAIL_UPLOAD_ROOT: "/srv/uploads",
  };
  const set = loadConfig((k) => env[k]);
  assertEquals([set.allowFileUrls, set.uploadRoot], [false, "/srv/uploads"]);
  assertEquals(
    loadConfig((k) => (k === "KROMETRAIL_ALLOW_FILE_URLS" ? "true" : undefined)).allowFileUrls,
    true,
  );
  assertThrows(
    () => loadConfig((k) => (k === "KROMETRAIL_ALLOW_FILE_URLS" ? "no" : undefined)),
    "KROMETRAIL_ALLOW_FILE_URLS must be 0 or 1",
  );
  assertThrows(
    () => loadConfig((k) => (k === "KROMETRAIL_UPLOAD_ROOT" ? "uploads" : undefined)),
    "KROMETRAIL_UPLOAD_ROOT must be an absolute path",
  );
});

Deno.test("reconnect window: 30 s by default, KROMETRAIL_RECONNECT_WINDOW_MS within 1 s..10 min", () => {
  const window = (raw?: string) =>
    loadConfig((k) => (k === "KROMETRAIL_RECONNECT_WINDOW_MS" ? raw : undefined)).reconnectWindowMs;
  assertEquals(window(), 30_000);
  assertEquals(window(""), 30_000);
  assertEquals([window("1000"), window("15000"), window("600000")], [1_000, 15_000, 600_000]);
  for (const bad of ["999", "0", "600001"]) {
    assertThrows(() => window(bad), "KROMETRAIL_RECONNECT_WINDOW_MS must be between 1000 and 600000 ms");
  }
  for (const bad of ["-5", "abc", "1.5"]) {
    assertThrows(() => window(bad), "KROMETRAIL_RECONNECT_WINDOW_MS");
  }
});
