/**
 * The pure half of `emulate`: network presets, the request merged into a page's active emulation,
 * and the words for both. No CDP here (emulation.ts sends), so every rule is unit-tested.
 *
 * Network presets follow DevTools' own table (front_end/core/sdk/NetworkManager.ts, as Puppeteer's
 * PredefinedNetworkConditions restates it): the RTT is scaled to request latency and the bandwidth
 * derated, so "Slow 3G" is 2,000 ms and 400 kbps each way. "Slow 4G" is DevTools' alias of "Fast 3G".
 */
import { ToolError } from "../errors.ts";
import type { NetworkThrottle } from "../browser/network_rules.ts";

export interface NetworkEmulation {
  /** The preset's name, "offline", or "custom". */
  preset: string;
  offline: boolean;
  latency_ms: number;
  /** Kilobits per second; null: not throttled. */
  download_kbps: number | null;
  upload_kbps: number | null;
}

export interface MediaEmulation {
  type?: "print" | "screen";
  prefers_color_scheme?: "light" | "dark";
  prefers_reduced_motion?: "reduce" | "no-preference";
  forced_colors?: "active" | "none";
}

export interface GeolocationEmulation {
  latitude: number;
  longitude: number;
  accuracy: number;
}

/** A page's active emulation: a field is present only while it is emulated. */
export interface EmulationState {
  network?: NetworkEmulation;
  cpu_slowdown?: number;
  geolocation?: GeolocationEmulation;
  media?: MediaEmulation;
  timezone?: string;
  locale?: string;
  user_agent?: string;
}

export type EmulationGroup = keyof EmulationState;
export const GROUPS: readonly EmulationGroup[] = [
  "network",
  "cpu_slowdown",
  "geolocation",
  "media",
  "timezone",
  "locale",
  "user_agent",
];

type Nullable<T> = { [K in keyof T]?: T[K] | null };

/** What one `emulate` call asks for; null (or "none", or cpu 1) removes that part. */
export interface EmulationRequest {
  network?: string | { latency_ms?: number; download_kbps?: number; upload_kbps?: number } | null;
  cpu_slowdown?: number;
  geolocation?: { latitude: number; longitude: number; accuracy?: number } | null;
  media?: Nullable<MediaEmulation> | null;
  timezone?: string | null;
  locale?: string | null;
  user_agent?: string | null;
  clear?: boolean;
}

export const CPU_LIMITS = { min: 1, max: 20 } as const;
export const DEFAULT_ACCURACY_M = 100;

const PRESETS: Record<string, Omit<NetworkEmulation, "preset" | "offline">> = {
  "Slow 3G": { latency_ms: 2_000, download_kbps: 400, upload_kbps: 400 },
  "Fast 3G": { latency_ms: 562.5, download_kbps: 1_440, upload_kbps: 675 },
  "Slow 4G": { latency_ms: 562.5, download_kbps: 1_440, upload_kbps: 675 },
  "Fast 4G": { latency_ms: 165, download_kbps: 8_100, upload_kbps: 1_350 },
};

export const NETWORK_NAMES = ["offline", ...Object.keys(PRESETS), "none"];

/** "Slow 3G", "slow_3g", "slow-3g" and "SLOW3G" are one name. */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, "");
}

/** The network part a request names; null removes network emulation. */
export function resolveNetwork(arg: NonNullable<EmulationRequest["network"]>): NetworkEmulation | null {
  if (typeof arg !== "string") {
    return {
      preset: "custom",
      offline: false,
      latency_ms: arg.latency_ms ?? 0,
      download_kbps: arg.download_kbps ?? null,
      upload_kbps: arg.upload_kbps ?? null,
    };
  }
  const key = nameKey(arg);
  if (key === "none" || key === "noemulation") return null;
  if (key === "offline") {
    return { preset: "offline", offline: true, latency_ms: 0, download_kbps: null, upload_kbps: null };
  }
  const name = Object.keys(PRESETS).find((n) => nameKey(n) === key);
  if (!name) {
    throw new ToolError({
      code: "unknown_network_preset",
      message: `Unknown network preset ${JSON.stringify(arg)}; known: ${NETWORK_NAMES.join(", ")}.`,
      retry: "never",
      recovery: `Pass one of ${
        NETWORK_NAMES.join(", ")
      } (slow_3g style accepted), or {latency_ms, download_kbps, upload_kbps}.`,
      details: { value: arg, allowed: NETWORK_NAMES },
    });
  }
  return { preset: name, offline: false, ...PRESETS[name] };
}

/** CDP units: bytes per second, -1 for none. */
export function throttleOf(n: NetworkEmulation): NetworkThrottle {
  const bps = (kbps: number | null) => kbps === null ? -1 : Math.round(kbps * 1000 / 8);
  return {
    offline: n.offline,
    latency: n.latency_ms,
    downloadThroughput: bps(n.download_kbps),
    uploadThroughput: bps(n.upload_kbps),
  };
}

/**
 * Timezones are checked here against the same ICU names: Chrome refuses an unknown id only while no
 * timezone override is active; with one active it answers success and keeps the old zone (measured on
 * Chromium 156), so its refusal alone would let a typo look applied.
 */
export function checkTimezone(timezone: string): string {
  try {
    if (!/^[+-]\d/.test(timezone)) {
      new Intl.DateTimeFormat("en-US", { timeZone: timezone });
      return timezone;
    }
  } catch { /* reported below */ }
  throw new ToolError({
    code: "invalid_timezone",
    message: `Timezone ${JSON.stringify(timezone)} is not an IANA timezone id.`,
    retry: "never",
    recovery: 'Pass an IANA id such as "Europe/Berlin", "America/New_York" or "UTC".',
    details: { value: timezone },
  });
}

/** Locale syntax is checked here (BCP 47); whether Chrome has the locale is its own answer. */
export function checkLocale(locale: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(locale);
    if (canonical) return canonical;
  } catch { /* reported below */ }
  throw new ToolError({
    code: "invalid_locale",
    message: `Locale ${JSON.stringify(locale)} is not a BCP 47 language tag.`,
    retry: "never",
    recovery: 'Pass a tag such as "en-US", "de-DE" or "ja-JP".',
    details: { value: locale },
  });
}

function mergeMedia(
  prev: MediaEmulation | undefined,
  req: Nullable<MediaEmulation> | null,
): MediaEmulation | undefined {
  if (req === null) return undefined;
  const next: Record<string, string> = { ...prev };
  for (const [k, v] of Object.entries(req)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  return Object.keys(next).length ? next as MediaEmulation : undefined;
}

export interface Merged {
  next: EmulationState;
  /** The parts whose value changed: the new value, or null where it was removed. */
  changed: Partial<Record<EmulationGroup, unknown>>;
}

/** The request merged into the active state (clear first, then whatever else it sets). */
export function mergeEmulation(prev: EmulationState, req: EmulationRequest): Merged {
  const base: EmulationState = req.clear ? {} : { ...prev };
  const next: Record<string, unknown> = { ...base };
  const set = (k: EmulationGroup, v: unknown) => {
    if (v === undefined || v === null) delete next[k];
    else next[k] = v;
  };
  if (req.network !== undefined) set("network", req.network === null ? null : resolveNetwork(req.network));
  if (req.cpu_slowdown !== undefined) set("cpu_slowdown", req.cpu_slowdown === 1 ? null : req.cpu_slowdown);
  if (req.geolocation !== undefined) {
    set(
      "geolocation",
      req.geolocation && { ...req.geolocation, accuracy: req.geolocation.accuracy ?? DEFAULT_ACCURACY_M },
    );
  }
  if (req.media !== undefined) set("media", mergeMedia(base.media, req.media));
  if (req.timezone !== undefined) set("timezone", req.timezone === null ? null : checkTimezone(req.timezone));
  if (req.locale !== undefined) set("locale", req.locale === null ? null : checkLocale(req.locale));
  if (req.user_agent !== undefined) set("user_agent", req.user_agent);
  const changed: Partial<Record<EmulationGroup, unknown>> = {};
  for (const g of GROUPS) {
    if (JSON.stringify(prev[g]) !== JSON.stringify(next[g])) changed[g] = next[g] ?? null;
  }
  return { next: next as EmulationState, changed };
}

function num(v: number): string {
  return Number.isInteger(v) ? v.toLocaleString("en-US").replaceAll(",", "") : String(v);
}

export function describeNetwork(n: NetworkEmulation): string {
  if (n.offline) return "network offline";
  const rate = (v: number | null) => v === null ? "unlimited" : num(v);
  return `network ${n.preset === "custom" ? "custom" : n.preset} (${num(n.latency_ms)} ms, ${
    rate(n.download_kbps)
  }/${rate(n.upload_kbps)} kbps)`;
}

function describeMedia(m: MediaEmulation): string {
  return [
    m.type ? `media ${m.type}` : undefined,
    m.prefers_color_scheme ? `color scheme ${m.prefers_color_scheme}` : undefined,
    m.prefers_reduced_motion ? `reduced motion ${m.prefers_reduced_motion}` : undefined,
    m.forced_colors ? `forced colors ${m.forced_colors}` : undefined,
  ].filter(Boolean).join(", ");
}

const UA_TEXT = 60;

function describePart(g: EmulationGroup, s: EmulationState): string | undefined {
  switch (g) {
    case "network":
      return s.network && describeNetwork(s.network);
    case "cpu_slowdown":
      return s.cpu_slowdown === undefined ? undefined : `cpu ${num(s.cpu_slowdown)}×`;
    case "geolocation":
      return s.geolocation &&
        `geolocation ${s.geolocation.latitude},${s.geolocation.longitude} (±${
          num(s.geolocation.accuracy)
        } m)`;
    case "media":
      return s.media && describeMedia(s.media);
    case "timezone":
      return s.timezone && `timezone ${s.timezone}`;
    case "locale":
      return s.locale && `locale ${s.locale}`;
    case "user_agent":
      return s.user_agent !== undefined
        ? `user agent "${
          s.user_agent.length > UA_TEXT ? `${s.user_agent.slice(0, UA_TEXT)}…` : s.user_agent
        }"`
        : undefined;
  }
}

/** The whole active emulation in one line; "none" when nothing is emulated. */
export function describeState(s: EmulationState): string {
  const parts = GROUPS.map((g) => describePart(g, s)).filter((p): p is string => Boolean(p));
  return parts.length ? parts.join(", ") : "none";
}

const REMOVED: Record<EmulationGroup, string> = {
  network: "network",
  cpu_slowdown: "cpu",
  geolocation: "geolocation",
  media: "media",
  timezone: "timezone",
  locale: "locale",
  user_agent: "user agent",
};

/** The change in words: each changed part as it now is, removals named; a clear says so. */
export function describeChange(m: Merged, cleared: boolean): string {
  const groups = GROUPS.filter((g) => g in m.changed);
  const set = groups.map((g) => describePart(g, m.next)).filter((p): p is string => Boolean(p));
  const removed = groups.filter((g) => m.next[g] === undefined).map((g) => REMOVED[g]);
  if (cleared && set.length === 0) {
    return removed.length ? `cleared (${removed.join(", ")})` : "cleared (nothing was emulated)";
  }
  if (groups.length === 0) return "unchanged";
  return [...set, ...(removed.length ? [`${removed.join(", ")} off`] : [])].join(", ");
}
