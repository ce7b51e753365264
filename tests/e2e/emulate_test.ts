import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface Event {
  kind: string;
  text: string | null;
  page_id: string | null;
  data: Record<string, unknown> | null;
}

interface Seen {
  dark: boolean;
  reduced_motion: boolean;
  timezone: string;
  language: string;
  user_agent: string;
  online: boolean;
  geolocation?: [number, number] | string;
}

async function evaluate<T>(server: ServerHandle, expression: string): Promise<T> {
  const r = await server.call("evaluate_page", { expression, timeout_ms: 20_000 });
  assert(!r.isError, textOf(r));
  return structured(r).value as T;
}

async function emulate(
  server: ServerHandle,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const r = await server.call("emulate", args);
  assert(!r.isError, textOf(r));
  return structured(r);
}

async function events(server: ServerHandle, kinds: string[]): Promise<Event[]> {
  return structured(await server.call("query_browser_events", { kinds, max_events: 200 })).events as Event[];
}

/** `count` runs of the same loop in the page, sorted (ms each). */
async function loopRuns(server: ServerHandle, n: number, count: number): Promise<number[]> {
  const runs = await evaluate<number[]>(server, `Array.from({ length: ${count} }, () => busyLoop(${n}))`);
  return runs.sort((a, b) => a - b);
}

Deno.test({
  name:
    "emulate: offline fails a fetch, Slow 3G delays one by 2 s, cpu 4× slows a loop, media/geolocation/timezone/locale reach the page, survive navigation, are events, and clear",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const base = `${site.origin}/emulation`;
      await server.call("navigate_page", { url: `${base}/index.html` });
      const before = await evaluate<Seen>(server, "seen(false)");

      // CPU: the same loop in the same page, before and after.
      // Chrome throttles by suspending the renderer's main thread for part of each time slice, so the
      // throttled loop is slow whatever the host's load, while an unthrottled run on a busy host is
      // slowed by contention too (measured at load 12 on 2 cores: unthrottled 100-330 ms, throttled
      // ~500 ms). The page's own speed is its best unthrottled run, sampled before and after.
      const N = 8_000_000;
      await loopRuns(server, N / 4, 1); // warm the JIT so both measurements run optimized code
      const fast = await loopRuns(server, N, 5);
      const cpu = await emulate(server, { cpu_slowdown: 4 });
      assertEquals((cpu.emulation as Record<string, unknown>).cpu_slowdown, 4);
      const slow = await loopRuns(server, N, 3);
      await emulate(server, { cpu_slowdown: 1 });
      const best = Math.min(fast[0], ...(await loopRuns(server, N, 5)));
      assert(
        slow[1] >= best * 2,
        `cpu 4× slows the loop: best ${best.toFixed(0)} ms unthrottled (${fast.map((v) => v.toFixed(0))}) → ${
          slow.map((v) => v.toFixed(0))
        } ms`,
      );

      // Network: a 2 s latency preset, then offline.
      const slow3g = await emulate(server, { network: "slow_3g" });
      const net = (slow3g.emulation as { network: Record<string, unknown> }).network;
      assertEquals([net.preset, net.latency_ms, net.download_kbps], ["Slow 3G", 2_000, 400]);
      assert(textOf(await server.call("emulate", {})).includes("unchanged"));
      const delayed = await evaluate<{ ok: boolean; ms: number }>(server, "timedFetch('data.json')");
      assert(delayed.ok && delayed.ms >= 2_000, `Slow 3G delays the fetch ≥ 2 s: ${JSON.stringify(delayed)}`);

      await emulate(server, { network: "offline" });
      const failed = await evaluate<{ ok: boolean; error?: string }>(server, "timedFetch('data.json')");
      assertEquals(failed.ok, false, JSON.stringify(failed));
      assertEquals((await evaluate<Seen>(server, "seen(false)")).online, false);
      // The failure's row is written when Chrome reports it: poll for it, bounded.
      let failures: Event[] = [];
      for (let i = 0; i < 50; i++) {
        failures = await events(server, ["request_failed"]);
        if (failures.some((e) => String(e.data?.error).includes("INTERNET_DISCONNECTED"))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert(
        failures.some((e) => String(e.data?.error).includes("INTERNET_DISCONNECTED")),
        `the failure says offline: ${JSON.stringify(failures)}`,
      );

      // Media, geolocation, timezone, locale, merged into one state.
      const set = await emulate(server, {
        network: "none",
        media: { prefers_color_scheme: "dark", prefers_reduced_motion: "reduce" },
        geolocation: { latitude: 48.8584, longitude: 2.2945 },
        timezone: "Asia/Tokyo",
        locale: "de-DE",
      });
      assertEquals(Object.keys(set.emulation as object).sort(), [
        "geolocation",
        "locale",
        "media",
        "timezone",
      ]);
      const seen = await evaluate<Seen>(server, "seen()");
      assertEquals(seen.dark, true);
      assertEquals(seen.reduced_motion, true);
      assertEquals(seen.timezone, "Asia/Tokyo");
      assertEquals(seen.language, "de-DE");
      assertEquals(seen.online, true);
      assertEquals(seen.geolocation, [48.8584, 2.2945]);

      // A merge changes one feature and keeps the rest; then everything survives a navigation.
      await emulate(server, { media: { prefers_reduced_motion: null } });
      // Another site (localhost beside 127.0.0.1): a new renderer process, the same emulation.
      const crossSite = await server.call("navigate_page", {
        url: `${base.replace("127.0.0.1", "localhost")}/next.html`,
      });
      assert(!crossSite.isError, textOf(crossSite));
      const after = await evaluate<Seen>(server, "seen()");
      assertEquals(
        [after.dark, after.reduced_motion, after.timezone, after.language, after.geolocation],
        [true, false, "Asia/Tokyo", "de-DE", [48.8584, 2.2945]],
      );
      // Another timezone and locale while overrides are in force.
      await emulate(server, { timezone: "Europe/Berlin", locale: "fr-FR" });
      const moved = await evaluate<Seen>(server, "seen(false)");
      assertEquals([moved.timezone, moved.language], ["Europe/Berlin", "fr-FR"]);
      await emulate(server, { user_agent: "krometrail-test/1.0" });
      const agent = await evaluate<Seen>(server, "seen(false)");
      assertEquals([agent.user_agent, agent.language], ["krometrail-test/1.0", "fr-FR"]);

      // browser_status names it.
      const status = await server.call("browser_status", {});
      assert(
        /emulation on p\d+: .*color scheme dark.*timezone Europe\/Berlin/.test(textOf(status)),
        textOf(status),
      );

      // Bad values: structured errors naming the value and the allowed set or limit.
      const preset = await server.call("emulate", { network: "Slow 5G" });
      assertEquals(errorCode(preset), "unknown_network_preset");
      assert(textOf(preset).includes("Slow 3G"), textOf(preset));
      const tz = await server.call("emulate", { timezone: "Mars/Olympus_Mons" });
      assertEquals(errorCode(tz), "invalid_timezone", textOf(tz));
      assertEquals(errorCode(await server.call("emulate", { cpu_slowdown: 50 })), "invalid_arguments");
      assertEquals(
        (await evaluate<Seen>(server, "seen(false)")).timezone,
        "Europe/Berlin",
        "a refusal changes nothing",
      );

      // Clear removes all of it.
      const cleared = await server.call("emulate", { clear: true });
      assert(textOf(cleared).includes("cleared"), textOf(cleared));
      assertEquals(structured(cleared).emulation, {});
      const back = await evaluate<Seen>(server, "seen(false)");
      assertEquals(
        [back.dark, back.timezone, back.language, back.user_agent],
        [before.dark, before.timezone, before.language, before.user_agent],
      );
      assert(!/emulation on/.test(textOf(await server.call("browser_status", {}))));

      // Every change is an emulation event with the full state after it.
      const emulations = await events(server, ["emulation"]);
      const texts = emulations.map((e) => e.text ?? "");
      assert(texts.includes("emulation: cpu 4×"), JSON.stringify(texts));
      assert(texts.includes("emulation: network Slow 3G (2000 ms, 400/400 kbps)"), JSON.stringify(texts));
      assert(texts.includes("emulation: network offline"), JSON.stringify(texts));
      assert(texts[texts.length - 1].startsWith("emulation: cleared"), JSON.stringify(texts));
      const tokyo = emulations.find((e) => (e.text ?? "").includes("timezone Asia/Tokyo"));
      assertEquals((tokyo?.data?.state as Record<string, unknown>).timezone, "Asia/Tokyo");
      assertEquals(emulations.length, 9, "no event for an unchanged or refused call");
    }, { browser: {} }),
});

Deno.test({
  name:
    "emulate on the timeline: a bundle over a late banner's layout shift names the shift, marks it in the storyboard and says what emulation the range ran under",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/performance/shift.html` });
      // The first document's own banner comes 300 ms after its first paint: let it land before the trace
      // starts, so the reload's shift is the only one measured.
      const landed = await server.call("wait", { text: "Sale", timeout_ms: 10_000 });
      assert(!landed.isError, textOf(landed));
      await emulate(server, { media: { prefers_color_scheme: "dark" } });
      const measured = await server.call("measure_performance", { mode: "reload" });
      assertEquals(structured(measured).status, "measured", textOf(measured));
      const shift = (await events(server, ["layout_shift"])).at(-1) as Event & { session_time_ms: number };
      assert(shift, "the banner's shift is on the timeline");

      // The range opens 600 ms before the shift, but after the emulation change: a reload that paints within
      // 600 ms (a quiet machine) would otherwise put the change inside the range, which then reports the
      // change rather than the emulation it ran under.
      const changed = (await events(server, ["emulation"])).at(-1) as Event & { session_time_ms: number };
      assert(changed, "the emulation change is on the timeline");
      const start = Math.max(shift.session_time_ms - 600, changed.session_time_ms + 1);
      const bundle = await server.call("temporal_debug_bundle", {
        range: { start_ms: start, end_ms: shift.session_time_ms + 900 },
      });
      const text = textOf(bundle);
      assert(!bundle.isError, text);
      assert(
        /layout shifts: 1 \(total score [\d.]+\); largest at .*layout shift 0\.\d+: .+ moved/.test(text),
        text,
      );
      assert(text.includes("under emulation: color scheme dark"), text);
      // Ranked first among the events nearest the change, and a storyboard tile marks its moment.
      const [view] = structured(bundle).bundles as Array<{ events: Array<{ kind: string }> }>;
      assertEquals(view.events[0]?.kind, "layout_shift", JSON.stringify(view.events));
      const shiftOffset = shift.session_time_ms - start; // the range opens up to 600 ms before the shift
      const board = text.split("\n").find((l) => l.startsWith("Storyboard ")) ?? "";
      const marked = board.split("; ").filter((t) => t.includes("at marker")).map((t) =>
        Number((/([+-][\d,.]+) ms/.exec(t)?.[1] ?? "NaN").replaceAll(",", ""))
      );
      assert(marked.some((at) => at >= shiftOffset), `a tile at or after the shift is marked: ${board}`);
      const primary = structured(bundle).primary as { manifest_uri: string };
      const read = await server.client.readResource({ uri: primary.manifest_uri });
      const first = read.contents[0] as { text?: string; blob?: string };
      const raw = first.text ??
        new TextDecoder().decode(Uint8Array.from(atob(first.blob ?? ""), (c) => c.charCodeAt(0)));
      const manifest = JSON.parse(raw) as {
        markers?: Array<{ kind: string; label: string }>;
      };
      assert(
        manifest.markers?.some((m) => m.kind === "layout_shift" && m.label === shift.text),
        `the storyboard's manifest marks the shift: ${JSON.stringify(manifest.markers)}`,
      );
    }, { browser: {} }),
});
