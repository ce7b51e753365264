/**
 * `emulate` on one page target: network conditions, CPU slowdown, geolocation, media features,
 * timezone, locale and user agent. The active state lives in the page's "emulation" override, so a
 * same-target reattachment re-applies all of it before the page runs (like browser/viewport.ts),
 * and the network part joins the page's composed rule list (browser/network_rules.ts) instead of
 * replacing what the scenario guard keeps there. Every change is an `emulation` event on the session
 * clock, with the full state after it, so the temporal layer can say what a range ran under.
 */
import { cdpMessage } from "../browser/cdp.ts";
import { emitSessionEvent } from "../browser/events.ts";
import { type NetworkRuleSource, type NetworkThrottle, sendNetworkRules } from "../browser/network_rules.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import {
  describeChange,
  describeState,
  type EmulationGroup,
  type EmulationRequest,
  type EmulationState,
  GROUPS,
  type MediaEmulation,
  mergeEmulation,
  throttleOf,
} from "./emulation_presets.ts";

const OVERRIDE_KEY = "emulation";

const MEDIA_FEATURES: Array<[keyof MediaEmulation, string]> = [
  ["prefers_color_scheme", "prefers-color-scheme"],
  ["prefers_reduced_motion", "prefers-reduced-motion"],
  ["forced_colors", "forced-colors"],
];

/** The override kept on the target: its commands re-create the whole state on initialization. */
export class EmulationOverride implements NetworkRuleSource {
  constructor(readonly state: Readonly<EmulationState>) {}

  networkConditions(): NetworkThrottle | undefined {
    return this.state.network && throttleOf(this.state.network);
  }

  apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>> {
    return GROUPS.flatMap((g) => g in this.state ? groupCommands(page, g, this.state, timeoutMs) : []);
  }
}

/** Pages whose emulation holds a position; the browser-wide geolocation grant lasts while one is open. */
const geolocatedPages = new Set<PageTarget>();

/** The commands that make one part of `state` hold (or, when absent from it, undo that part). */
function groupCommands(
  page: PageTarget,
  g: EmulationGroup,
  s: EmulationState,
  timeoutMs?: number,
): Array<Promise<unknown>> {
  switch (g) {
    case "network": {
      // The composed rules do the throttling; the network state is what navigator.onLine reports.
      const t = s.network ? throttleOf(s.network) : undefined;
      return [
        sendNetworkRules(page, timeoutMs),
        page.send("Network.overrideNetworkState", {
          offline: t?.offline ?? false,
          latency: t?.latency ?? 0,
          downloadThroughput: t?.downloadThroughput ?? -1,
          uploadThroughput: t?.uploadThroughput ?? -1,
        }, timeoutMs),
      ];
    }
    case "cpu_slowdown":
      return [page.send("Emulation.setCPUThrottlingRate", { rate: s.cpu_slowdown ?? 1 }, timeoutMs)];
    case "geolocation":
      for (const p of geolocatedPages) if (p.closed) geolocatedPages.delete(p);
      if (s.geolocation) geolocatedPages.add(page);
      else geolocatedPages.delete(page);
      // The permission is browser-wide: another page still emulating a position keeps it granted.
      if (!s.geolocation && geolocatedPages.size > 0) {
        return [page.send("Emulation.clearGeolocationOverride", undefined, timeoutMs)];
      }
      return s.geolocation
        ? [
          page.send("Emulation.setGeolocationOverride", { ...s.geolocation }, timeoutMs),
          // Every origin of the page's context: the page may navigate elsewhere and must not prompt.
          page.send(
            "Browser.setPermission",
            { permission: { name: "geolocation" }, setting: "granted" },
            timeoutMs,
          ),
        ]
        : [
          page.send("Emulation.clearGeolocationOverride", undefined, timeoutMs),
          page.send(
            "Browser.setPermission",
            { permission: { name: "geolocation" }, setting: "prompt" },
            timeoutMs,
          ),
        ];
    case "media": {
      const m = s.media ?? {};
      const features = MEDIA_FEATURES.flatMap(([k, name]) => m[k] ? [{ name, value: String(m[k]) }] : []);
      return [page.send("Emulation.setEmulatedMedia", { media: m.type ?? "", features }, timeoutMs)];
    }
    case "timezone":
      return [page.send("Emulation.setTimezoneOverride", { timezoneId: s.timezone ?? "" }, timeoutMs)];
    case "locale":
    case "user_agent":
      // setLocaleOverride is Intl only; navigator.language and Accept-Language come from the user
      // agent override's acceptLanguage (an empty userAgent keeps the browser's own).
      return [
        ...(g === "locale"
          ? [page.send("Emulation.setLocaleOverride", s.locale ? { locale: s.locale } : {}, timeoutMs)]
          : []),
        page.send("Emulation.setUserAgentOverride", {
          userAgent: s.user_agent ?? "",
          ...(s.locale ? { acceptLanguage: s.locale } : {}),
        }, timeoutMs),
      ];
  }
}

export function currentEmulation(page: PageTarget): EmulationState {
  const o = page.overrides.get(OVERRIDE_KEY);
  return o instanceof EmulationOverride ? o.state : {};
}

/** The page's active emulation for browser_status; undefined when nothing is emulated. */
export function emulationState(page: PageTarget): EmulationState | undefined {
  const s = currentEmulation(page);
  return Object.keys(s).length ? { ...s } : undefined;
}

/** One line for browser_status ("network Slow 3G (2000 ms, 400/400 kbps), cpu 4×"), or undefined. */
export function emulationSummary(page: PageTarget): string | undefined {
  const s = emulationState(page);
  return s ? describeState(s) : undefined;
}

export interface EmulationResult {
  state: EmulationState;
  changed: Partial<Record<EmulationGroup, unknown>>;
  /** The change in words ("network Slow 3G (2000 ms, 400/400 kbps), cpu 4×", "cleared (cpu)"). */
  change: string;
  /** The whole active state in words. */
  summary: string;
  recorded: boolean;
}

function keep(page: PageTarget, state: EmulationState): void {
  if (Object.keys(state).length) page.overrides.set(OVERRIDE_KEY, new EmulationOverride(state));
  else page.overrides.delete(OVERRIDE_KEY);
}

/** What Chrome refused, as an error that names the value and says what to pass. */
function refusal(page: PageTarget, g: EmulationGroup, state: EmulationState, err: unknown): ToolError {
  if (err instanceof ToolError && (err.code === "page_closed" || err.code === "cdp_timeout")) return err;
  const message = cdpMessage(err);
  const value = state[g];
  const recovery: Partial<Record<EmulationGroup, string>> = {
    timezone: 'Pass an IANA timezone id Chrome knows, such as "Europe/Berlin" or "America/New_York".',
    locale: 'Pass a locale Chrome has, such as "en-US", "de-DE" or "ja-JP".',
  };
  return new ToolError({
    code: g === "timezone" ? "invalid_timezone" : g === "locale" ? "invalid_locale" : "emulation_refused",
    message: `Chrome refused ${g} ${JSON.stringify(value)}: ${message}`,
    retry: "never",
    recovery: recovery[g] ?? "Check the value against the emulate schema and retry; nothing was changed.",
    affected: { page_id: page.id },
    details: { field: g, value, chrome: message },
  });
}

/**
 * Merges the request into the page's emulation and applies what changed. A part Chrome refuses
 * leaves the page as it was: the parts already sent are put back before the error is thrown.
 */
export async function applyEmulation(
  session: BrowserSession,
  page: PageTarget,
  req: EmulationRequest,
): Promise<EmulationResult> {
  const prev = currentEmulation(page);
  const merged = mergeEmulation(prev, req);
  const groups = GROUPS.filter((g) => g in merged.changed);
  // Kept first: the network rules are composed from the page's overrides as they now stand. The parts
  // go out together (one round trip); a refusal puts every changed part back.
  keep(page, merged.next);
  const results = await Promise.allSettled(
    groups.map((g) => Promise.all(groupCommands(page, g, merged.next))),
  );
  const failed = results.findIndex((r) => r.status === "rejected");
  if (failed >= 0) {
    keep(page, prev);
    await Promise.allSettled(groups.flatMap((g) => groupCommands(page, g, prev)));
    const reason = (results[failed] as PromiseRejectedResult).reason;
    throw refusal(page, groups[failed], merged.next, reason);
  }
  const change = describeChange(merged, req.clear === true);
  const summary = describeState(merged.next);
  const recorded = groups.length > 0 || req.clear === true
    ? emitSessionEvent(session, page, "emulation", {
      text: `emulation: ${change}`,
      data: { changed: merged.changed, state: merged.next, summary },
    })
    : false;
  return { state: merged.next, changed: merged.changed, change, summary, recorded };
}
