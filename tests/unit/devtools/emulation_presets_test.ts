import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  checkLocale,
  checkTimezone,
  describeChange,
  describeState,
  mergeEmulation,
  NETWORK_NAMES,
  resolveNetwork,
  throttleOf,
} from "../../../src/devtools/emulation_presets.ts";

function toolError(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

Deno.test("resolveNetwork: DevTools' presets under any spelling, offline, none, custom", () => {
  for (const name of ["Slow 3G", "slow_3g", "slow-3g", "SLOW3G"]) {
    assertEquals(resolveNetwork(name), {
      preset: "Slow 3G",
      offline: false,
      latency_ms: 2_000,
      download_kbps: 400,
      upload_kbps: 400,
    });
  }
  assertEquals(resolveNetwork("fast_3g")?.latency_ms, 562.5);
  assertEquals(resolveNetwork("Slow 4G")?.download_kbps, resolveNetwork("Fast 3G")?.download_kbps);
  assertEquals(resolveNetwork("fast_4g")?.latency_ms, 165);
  assertEquals(resolveNetwork("offline")?.offline, true);
  assertEquals(resolveNetwork("none"), null);
  assertEquals(resolveNetwork("No emulation"), null);
  assertEquals(resolveNetwork({ latency_ms: 300 }), {
    preset: "custom",
    offline: false,
    latency_ms: 300,
    download_kbps: null,
    upload_kbps: null,
  });
});

Deno.test("resolveNetwork: an unknown name is an error naming it and the allowed set", () => {
  const err = toolError(() => resolveNetwork("Slow 5G"));
  assertEquals(err.code, "unknown_network_preset");
  assert(err.message.includes('"Slow 5G"') && err.message.includes("Fast 4G"), err.message);
  assertEquals(err.details?.allowed, NETWORK_NAMES);
});

Deno.test("throttleOf: kilobits per second to CDP bytes per second, -1 for unthrottled", () => {
  const slow = resolveNetwork("slow_3g");
  assert(slow);
  assertEquals(throttleOf(slow), {
    offline: false,
    latency: 2_000,
    downloadThroughput: 50_000,
    uploadThroughput: 50_000,
  });
  assertEquals(
    throttleOf({ preset: "custom", offline: false, latency_ms: 0, download_kbps: null, upload_kbps: 8 }),
    {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1_000,
    },
  );
});

Deno.test("mergeEmulation: a call merges into the state; null, none and cpu 1 remove a part", () => {
  const first = mergeEmulation({}, {
    network: "slow_3g",
    cpu_slowdown: 4,
    media: { prefers_color_scheme: "dark" },
  });
  assertEquals(Object.keys(first.changed).sort(), ["cpu_slowdown", "media", "network"]);
  const second = mergeEmulation(first.next, {
    cpu_slowdown: 1,
    media: { prefers_reduced_motion: "reduce" },
    timezone: "Europe/Berlin",
  });
  assertEquals(second.next.cpu_slowdown, undefined);
  assertEquals(second.next.network?.preset, "Slow 3G", "what the call does not name stays");
  assertEquals(second.next.media, { prefers_color_scheme: "dark", prefers_reduced_motion: "reduce" });
  assertEquals(second.changed.cpu_slowdown, null);
  assertEquals("network" in second.changed, false);
  const third = mergeEmulation(second.next, { network: "none", media: { prefers_color_scheme: null } });
  assertEquals(third.next.network, undefined);
  assertEquals(third.next.media, { prefers_reduced_motion: "reduce" });
  assertEquals(mergeEmulation(third.next, { media: null }).next.media, undefined);
  assertEquals(Object.keys(mergeEmulation(third.next, { timezone: "Europe/Berlin" }).changed), []);
});

Deno.test("mergeEmulation: clear removes everything first, then sets what the same call names", () => {
  const prev =
    mergeEmulation({}, { network: "offline", locale: "de-DE", geolocation: { latitude: 1, longitude: 2 } })
      .next;
  assertEquals(prev.geolocation, { latitude: 1, longitude: 2, accuracy: 100 });
  const cleared = mergeEmulation(prev, { clear: true });
  assertEquals(cleared.next, {});
  assertEquals(cleared.changed, { network: null, geolocation: null, locale: null });
  assertEquals(describeChange(cleared, true), "cleared (network, geolocation, locale)");
  const again = mergeEmulation(prev, { clear: true, cpu_slowdown: 2 });
  assertEquals(again.next, { cpu_slowdown: 2 });
  assertEquals(describeChange(mergeEmulation({}, { clear: true }), true), "cleared (nothing was emulated)");
});

Deno.test("describeState and describeChange: one compact line each", () => {
  const m = mergeEmulation({}, {
    network: "slow_3g",
    cpu_slowdown: 4,
    media: { type: "print", prefers_color_scheme: "dark" },
    timezone: "Asia/Tokyo",
    user_agent: "x".repeat(100),
  });
  assertEquals(
    describeState(m.next),
    `network Slow 3G (2000 ms, 400/400 kbps), cpu 4×, media print, color scheme dark, timezone Asia/Tokyo, user agent "${
      "x".repeat(60)
    }…"`,
  );
  assertEquals(describeState({}), "none");
  const off = mergeEmulation(m.next, { cpu_slowdown: 1, network: "offline" });
  assertEquals(describeChange(off, false), "network offline, cpu off");
  assertEquals(describeChange(mergeEmulation(off.next, {}), false), "unchanged");
  assertEquals(
    describeState(mergeEmulation({}, { network: { latency_ms: 120, download_kbps: 1000 } }).next),
    "network custom (120 ms, 1000/unlimited kbps)",
  );
});

Deno.test("checkTimezone and checkLocale: IANA ids and BCP 47 tags, errors naming the value", () => {
  assertEquals(checkTimezone("Europe/Berlin"), "Europe/Berlin");
  assertEquals(checkTimezone("UTC"), "UTC");
  const tz = toolError(() => checkTimezone("Mars/Olympus_Mons"));
  assertEquals(tz.code, "invalid_timezone");
  assert(tz.message.includes("Mars/Olympus_Mons"));
  assertEquals(toolError(() => checkTimezone("+05:00")).code, "invalid_timezone");
  assertEquals(checkLocale("de-de"), "de-DE");
  assertEquals(toolError(() => checkLocale("not a locale")).code, "invalid_locale");
  assertThrows(() => mergeEmulation({}, { timezone: "Nowhere/Nothing" }), "Nowhere/Nothing");
});
