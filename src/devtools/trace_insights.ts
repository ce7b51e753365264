import type * as Trace from "@paulirish/trace_engine";

/** One insight of Chrome's trace engine, as the summary lists it. */
export interface InsightLine {
  name: string;
  title: string;
  state: "pass" | "fail" | "informative";
  summary: string;
}

export const INSIGHT_LIMIT = 8;
const SUMMARY_CHARS = 160;
const STATE_ORDER = { fail: 0, informative: 1, pass: 2 } as const;

type InsightSet = Trace.Insights.Types.InsightSet;
type Models = InsightSet["model"];
type Model = NonNullable<Models[keyof Models]>;
interface I18n {
  i18nId?: string;
  formattedDefault?: string;
}

const ms = (us: number) => Math.round(us / 100) / 10;

function i18nText(value: unknown): string {
  if (typeof value === "string") return value;
  const t = value as I18n | undefined;
  return t?.formattedDefault ?? t?.i18nId ?? "";
}

/** The first sentence of the engine's description, markdown links reduced to their text. */
function firstSentence(description: unknown): string {
  const plain = i18nText(description).replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
  const end = plain.search(/\.(\s|$)/);
  return end > 0 ? plain.slice(0, end + 1) : plain;
}

function savings(model: Model): string | undefined {
  const parts = Object.entries(model.metricSavings ?? {})
    .filter(([, v]) => typeof v === "number" && Number.isFinite(v) && v > 0)
    .map(([metric, v]) =>
      metric === "CLS" ? `CLS ${Number(v).toFixed(3)}` : `${metric} ~${Math.round(v)} ms`
    );
  return parts.length > 0 ? `could save ${parts.join(", ")}` : undefined;
}

function subpartLine(subparts: Record<string, { range: number } | undefined>): string {
  const names: Record<string, string> = {
    ttfb: "TTFB",
    loadDelay: "load delay",
    loadDuration: "load",
    renderDelay: "render delay",
  };
  return Object.entries(names)
    .flatMap(([key, label]) => {
      const part = subparts[key];
      return part ? [`${label} ${ms(part.range)} ms`] : [];
    })
    .join(", ");
}

/** A one-line, specific summary for the insights that carry numbers; the engine's own sentence otherwise. */
/** A request's last path segment, without query or fragment (data: and the like stay as a scheme). */
export function fileName(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return `${u.protocol}…`;
    return u.pathname.split("/").pop() || u.host;
  } catch {
    return "(invalid URL)";
  }
}

function summarize(name: string, model: Model): string {
  const m = model as Record<string, unknown>;
  if (name === "LCPBreakdown" && typeof m.lcpMs === "number") {
    const parts = m.subparts as Record<string, { range: number } | undefined> | undefined;
    return `LCP ${Math.round(m.lcpMs)} ms${parts ? `: ${subpartLine(parts)}` : ""}`;
  }
  if (name === "INPBreakdown") {
    const e = m.longestInteractionEvent as Trace.Types.Events.SyntheticInteractionPair | undefined;
    if (e) {
      return `longest interaction ${ms(e.dur)} ms (${e.type}): input delay ${ms(e.inputDelay)}, processing ${
        ms(e.mainThreadHandling)
      }, presentation ${ms(e.presentationDelay)} ms`;
    }
  }
  if (name === "CLSCulprits") {
    const worst = m.worstCluster as Trace.Types.Events.SyntheticLayoutShiftCluster | undefined;
    const top = worst
      ? (m.topCulpritsByCluster as Map<unknown, Array<{ description: unknown }>> | undefined)?.get(worst)
      : undefined;
    if (worst) {
      const culprits = (top ?? []).map((c) => i18nText(c.description)).filter((s) => s !== "");
      return `worst cluster ${worst.clusterCumulativeScore.toFixed(3)} (${worst.events.length} shift${
        worst.events.length === 1 ? "" : "s"
      })${culprits.length > 0 ? `; culprits: ${culprits.join(", ")}` : "; no culprit detected"}`;
    }
  }
  if (name === "RenderBlocking") {
    const requests = (m.renderBlockingRequests as Trace.Types.Events.SyntheticNetworkRequest[] | undefined) ??
      [];
    if (requests.length > 0) {
      // The file name only: query values are shown only when asked (get_network_request).
      const urls = requests.slice(0, 2).map((r) => fileName(r.args.data.url));
      return `${requests.length} render-blocking request${requests.length === 1 ? "" : "s"}: ${
        urls.join(", ")
      }${requests.length > 2 ? ", …" : ""}`;
    }
  }
  if (name === "DocumentLatency") {
    const d = m.data as {
      serverResponseTime: number;
      redirectDuration: number;
      uncompressedResponseBytes: number;
    };
    if (d) {
      return `server response ${Math.round(d.serverResponseTime)} ms, redirects ${
        Math.round(d.redirectDuration)
      } ms, uncompressed ${d.uncompressedResponseBytes} B`;
    }
  }
  return firstSentence(model.description);
}

function clip(text: string): string {
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

/**
 * The insights of the measured insight sets: failing first, then informative, up to INSIGHT_LIMIT with a
 * line each; passing ones by name only (what the engine checked and found fine).
 */
export function summarizeInsights(sets: readonly InsightSet[]): {
  insights: InsightLine[];
  insights_omitted: number;
  insights_passed: string[];
} {
  const lines: InsightLine[] = [];
  const passed = new Set<string>();
  const seen = new Set<string>();
  for (const set of sets) {
    for (const [name, model] of Object.entries(set.model) as Array<[string, Model | undefined]>) {
      if (!model) continue;
      if (model.state === "pass") {
        passed.add(name);
        continue;
      }
      if (seen.has(name)) continue;
      seen.add(name);
      const extra = savings(model);
      lines.push({
        name,
        title: i18nText(model.title) || name,
        state: model.state,
        summary: clip(extra ? `${summarize(name, model)}; ${extra}` : summarize(name, model)),
      });
    }
  }
  for (const name of seen) passed.delete(name);
  lines.sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state]);
  return {
    insights: lines.slice(0, INSIGHT_LIMIT),
    insights_omitted: Math.max(0, lines.length - INSIGHT_LIMIT),
    insights_passed: [...passed],
  };
}
