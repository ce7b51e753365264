import { z } from "zod";
import type { Tool } from "./define_tool.ts";
import { advertisedFormOverride, compactInputSchema, compactOutputSchema } from "./schema_compact.ts";
import { browserTools } from "./tools/browser.ts";
import { pageTools } from "./tools/pages.ts";
import { inspectTools } from "./tools/inspect.ts";
import { actionTools } from "./tools/actions.ts";
import { captureTools } from "./tools/capture.ts";
import { eventTools } from "./tools/events.ts";
import { temporalTools } from "./tools/temporal.ts";
import { videoTools } from "./tools/video.ts";
import { interactionTools } from "./tools/interactions.ts";
import { viewportTools } from "./tools/viewport.ts";
import { flowTools } from "./tools/flow.ts";
import { downloadTools } from "./tools/downloads.ts";
import { queryTools } from "./tools/query.ts";
import { observeTools } from "./tools/observe.ts";
import { pinTools } from "./tools/pins.ts";
import { markerTools } from "./tools/markers.ts";
import { pageStateTools } from "./tools/page_state.ts";
import { pageStateWindowTools } from "./tools/page_state_window.ts";
import { pageStateLayoutTools } from "./tools/page_state_layout.ts";
import { recordingTools } from "./tools/recordings.ts";
import { scenarioTools } from "./tools/scenario.ts";
import { networkTools } from "./tools/network.ts";
import { emulationTools } from "./tools/emulation.ts";
import { storageTools } from "./tools/storage.ts";
import { routeTools } from "./tools/routes.ts";
import { performanceTools } from "./tools/performance.ts";
import { formTools } from "./tools/forms.ts";
import { pdfTools } from "./tools/pdf.ts";
import { viewerTools } from "./tools/viewer.ts";
import { askHumanTools } from "./tools/ask_human.ts";

export type CapabilityName =
  | "control"
  | "temporal-vision"
  | "temporal-video"
  | "browser-events"
  | "page-state"
  | "framework-state"
  | "scenario"
  | "devtools"
  | "viewer";

export interface Capability {
  name: CapabilityName;
  default: "enabled" | "conditional" | "unavailable";
  depends: CapabilityName[];
  responsibility: string;
  /** Tools this build ships for the capability; empty means not built yet. */
  tools: Tool[];
}

/** The single source of truth for capability names, dependencies, availability and tool membership. */
export const CAPABILITIES: readonly Capability[] = [
  {
    name: "control",
    default: "enabled",
    depends: [],
    responsibility: "Browser lifecycle, structured snapshots, current screenshots, interaction and waiting",
    tools: [
      ...browserTools,
      ...pageTools,
      ...inspectTools,
      ...observeTools,
      ...actionTools,
      ...interactionTools,
      ...viewportTools,
      ...flowTools,
      ...downloadTools,
      ...queryTools,
      ...formTools,
    ],
  },
  {
    name: "temporal-vision",
    default: "enabled",
    depends: [],
    responsibility: "Continuous visual capture, temporal ranges, visual artifacts and source-frame retrieval",
    tools: [...captureTools, ...temporalTools, ...pinTools],
  },
  {
    name: "temporal-video",
    default: "conditional",
    depends: ["temporal-vision"],
    responsibility:
      "Bounded MP4/H.264 clips from retained source frames through a qualified user-installed ffmpeg",
    tools: videoTools,
  },
  {
    name: "browser-events",
    default: "enabled",
    depends: [],
    responsibility: "Console, exception, network metadata, navigation and lifecycle evidence",
    tools: eventTools,
  },
  {
    name: "page-state",
    default: "enabled",
    depends: ["temporal-vision"],
    responsibility: "Time-travel DOM: the DOM at any instant, diffs, element lifetimes, bisect, markers",
    tools: [
      ...pageStateTools,
      ...pageStateWindowTools,
      ...pageStateLayoutTools,
      ...markerTools,
      ...recordingTools,
    ],
  },
  {
    name: "scenario",
    default: "enabled",
    depends: ["control"],
    responsibility: "Declarative repeatable scenarios with per-step evidence and normalized comparison",
    tools: scenarioTools,
  },
  {
    name: "devtools",
    default: "enabled",
    depends: ["control"],
    responsibility:
      "DevTools parity on the session timeline: request detail, emulation, cookies and storage, request routing, performance traces, PDF",
    tools: [
      ...networkTools,
      ...emulationTools,
      ...storageTools,
      ...routeTools,
      ...performanceTools,
      ...pdfTools,
    ],
  },
  {
    name: "viewer",
    default: "enabled",
    depends: ["temporal-vision"],
    responsibility:
      "For people: a local evidence viewer on 127.0.0.1, and questions the agent asks a person about what was recorded",
    tools: [...viewerTools, ...askHumanTools],
  },
  {
    name: "framework-state",
    default: "unavailable",
    depends: [],
    responsibility: "Framework component, render and state evidence",
    tools: [],
  },
];

export type Availability = { available: true } | { available: false; reason: string };

/** What startup learned about conditional capabilities (e.g. whether ffmpeg qualified). */
export type Conditions = Partial<Record<CapabilityName, Availability>>;

/**
 * Startup availability per capability: built, enabled, its condition met (conditional ones are
 * unavailable unless a condition says otherwise), and its dependencies available.
 */
export function resolveAvailability(conditions: Conditions = {}): Map<CapabilityName, Availability> {
  const out = new Map<CapabilityName, Availability>();
  for (const cap of CAPABILITIES) {
    if (cap.default === "unavailable") {
      out.set(cap.name, { available: false, reason: "unavailable in this product" });
    } else if (cap.tools.length === 0) {
      out.set(cap.name, { available: false, reason: "not built in this version" });
    } else if (cap.default === "conditional") {
      out.set(
        cap.name,
        conditions[cap.name] ?? { available: false, reason: "its startup condition was not checked" },
      );
    } else out.set(cap.name, { available: true });
  }
  for (const cap of CAPABILITIES) {
    const missing = cap.depends.find((d) => !out.get(d)?.available);
    if (missing && out.get(cap.name)?.available) {
      out.set(cap.name, { available: false, reason: `depends on ${missing}, which is unavailable` });
    }
  }
  return out;
}

export interface Catalogue {
  tools: Tool[];
  availability: Map<CapabilityName, Availability>;
  /** Identity of this startup configuration; cursors from another configuration are invalid. */
  key: string;
}

export function buildCatalogue(conditions: Conditions = {}): Catalogue {
  const availability = resolveAvailability(conditions);
  const tools = CAPABILITIES.filter((c) => availability.get(c.name)?.available).flatMap((c) => c.tools)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new Error(`duplicate tool ${t.name}`);
    names.add(t.name);
  }
  const key = [...availability.entries()].map(([k, v]) => `${k}=${v.available ? 1 : 0}`).join(",");
  return { tools, availability, key };
}

/**
 * The JSON Schema of a tool's input: zod's draft 2020-12 output without the $schema line. "full" keeps
 * every limit (docs/tools.md); "compact" is what tools/list advertises (see schema_compact.ts).
 */
export function inputJsonSchema(
  tool: Tool,
  form: "compact" | "full",
): { type: "object"; [key: string]: unknown } {
  const schema = z.toJSONSchema(tool.input, {
    target: "draft-2020-12",
    io: "input",
    ...(form === "compact" ? { override: advertisedFormOverride } : {}),
  }) as Record<string, unknown>;
  delete schema.$schema;
  const out = { ...schema, type: "object" as const };
  return form === "compact" ? { ...compactInputSchema(out), type: "object" } : out;
}

/**
 * The JSON Schema of a tool's structuredContent (non-error results): "full" for docs/tools.md,
 * "compact" (top-level names and types) for tools/list.
 */
export function outputJsonSchema(
  tool: Tool,
  form: "compact" | "full",
): { type: "object"; [key: string]: unknown } {
  const schema = z.toJSONSchema(tool.output, { target: "draft-2020-12", io: "output" }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return { ...(form === "compact" ? compactOutputSchema(schema) : schema), type: "object" };
}

export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema: { type: "object"; [key: string]: unknown };
  annotations?: Record<string, boolean>;
}

/**
 * The descriptor tools/list sends: the compact schema by default, the full one (limits included) for
 * docs/tools.md.
 */
export function describeTool(tool: Tool, schema: "compact" | "full" = "compact"): ToolDescriptor {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool, schema),
    outputSchema: outputJsonSchema(tool, schema),
    ...(tool.annotations ? { annotations: { ...tool.annotations } as Record<string, boolean> } : {}),
  };
}
