/**
 * The demo's look at time: a click on the bundled fixture whose banner briefly shows a wrong state (a red
 * "Error") before the right one (a green "Saved"), then the debug bundle of that click. Its storyboard and
 * difference map are written beside the report, and the transient state it found is said in words.
 */
import { join } from "node:path";
import type { AppContext } from "../mcp/context.ts";
import type { ToolOutput } from "../mcp/response.ts";
import { signedMs } from "../temporal/render/layout.ts";
import { EVIDENCE_SCHEME } from "../store/instance.ts";
import type { TransientView as FullTransientView } from "../temporal/transients.ts";

export const TRANSITION_PAGE = "demo_transition.html";
export const STORYBOARD_FILE = "storyboard.png";
export const DIFFERENCE_MAP_FILE = "difference-map.png";

/** The fields of a bundle's transient state the demo words (temporal/transients.ts). */
export type TransientView = Pick<
  FullTransientView,
  "bounds" | "colour" | "appeared_ms" | "replaced_ms" | "duration_ms" | "frame_id" | "looks_final"
>;

export interface ArtifactView {
  kind: string;
  uri: string;
  tiles?: Array<{ frame_id: number; label?: string; offset_ms?: number }>;
}

/** The part of a bundle's first epoch the demo reads. */
export interface BundleView {
  measurements: { transient_states: TransientView[] };
  artifacts: ArtifactView[];
}

/** What the transition added: files written, lines for the terminal and the report's section. */
export interface TransitionResult {
  files: string[];
  console: string[];
  report: string[];
}

/** The wrong state: the red one the fixture flashes, else the first state that did not look final. */
function wrongState(states: TransientView[]): TransientView | undefined {
  return states.find((s) => s.colour === "red" && !s.looks_final) ?? states.find((s) => !s.looks_final);
}

function area(r: TransientView["bounds"]): string {
  return `${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}×${Math.round(r.height)} px`;
}

function stateWords(s: TransientView): string {
  const what = s.colour ? `${/^[aeiou]/.test(s.colour) ? "an" : "a"} ${s.colour} area` : "an area";
  return `${what} at ${area(s.bounds)} on screen for ${Math.round(s.duration_ms)} ms (${
    signedMs(s.appeared_ms)
  } to ${signedMs(s.replaced_ms)} after the click, frame #${s.frame_id})`;
}

/** The bundle's first epoch, as much of it as the demo reads; undefined when the bundle failed. */
function firstBundle(out: ToolOutput): BundleView | undefined {
  if (out.isError) return undefined;
  const bundles = out.structured.bundles as BundleView[] | undefined;
  return bundles?.[0];
}

/**
 * Writes the bundle's storyboard and difference map into the demo folder and describes what they show.
 * The bundle must have been asked with `detail: "expanded"`, which lists the difference map's URI.
 */
export async function saveTransition(
  app: AppContext,
  bundle: ToolOutput,
  outDir: string,
): Promise<TransitionResult> {
  const view = firstBundle(bundle);
  if (!view) return { files: [], console: [], report: [] };
  const storyboard = view.artifacts.find((a) => a.kind === "storyboard");
  const diff = view.artifacts.find((a) => a.kind === "difference_map");
  const files: string[] = [];
  for (const [artifact, name] of [[storyboard, STORYBOARD_FILE], [diff, DIFFERENCE_MAP_FILE]] as const) {
    if (!artifact?.uri.startsWith(EVIDENCE_SCHEME)) continue;
    const { bytes } = await app.store.readEvidence(artifact.uri.slice(EVIDENCE_SCHEME.length));
    await Deno.writeFile(join(outDir, name), bytes);
    files.push(name);
  }
  return { files, ...describeTransition(view, files) };
}

/** The terminal lines and the report's section for a bundle whose pictures were written as `files`. */
export function describeTransition(
  view: BundleView,
  files: string[],
): { console: string[]; report: string[] } {
  const storyboard = view.artifacts.find((a) => a.kind === "storyboard");
  const states = view.measurements.transient_states;
  const wrong = wrongState(states);
  const tiles = storyboard?.tiles ?? [];
  const tileIndex = wrong ? tiles.findIndex((t) => t.frame_id === wrong.frame_id) : -1;
  const inTile = tileIndex >= 0
    ? ` It is tile ${tileIndex + 1} of ${tiles.length} in the storyboard${
      tiles[tileIndex].label ? ` ("${tiles[tileIndex].label}")` : ""
    }.`
    : "";
  const found = wrong
    ? `The bundle found the wrong state: ${stateWords(wrong)}, before the final look replaced it.${inTile}`
    : "The bundle found no transient state this time (a loaded machine can paint a brief state in no frame); " +
      "the storyboard shows the frames it recorded.";
  const others = states.length - (wrong ? 1 : 0);

  const consoleLines = [
    wrong ? `transient: ${stateWords(wrong)}` : "transient: none found",
    ...(others > 0 ? [`and ${others} more transient state(s)`] : []),
    ...(files.length > 0 ? [`wrote ${files.join(", ")}`] : []),
  ];
  const report = [
    ``,
    `## A transition over time`,
    ``,
    `Clicking **Save** on ${TRANSITION_PAGE} flashes a red "Error" banner for about 250 ms ` +
    `before the green "Saved" confirmation: a wrong state a screenshot after the click would not show. ` +
    found,
    ``,
    ...(files.includes(STORYBOARD_FILE)
      ? [
        `![Storyboard of the Save click](${STORYBOARD_FILE})`,
        ``,
        `The storyboard: the frames the bundle chose around the click, each labelled with its time from the ` +
        `click's dispatch, from before the click to the settled page; the red banner is the wrong state.`,
        ``,
      ]
      : []),
    ...(files.includes(DIFFERENCE_MAP_FILE)
      ? [
        `![Difference map of the Save click](${DIFFERENCE_MAP_FILE})`,
        ``,
        `The difference map: a reference frame for place, then how often each pixel changed (brighter is ` +
        `more often) and when (the time palette), over the same range: the banner's box is where the page ` +
        `changed, twice (empty to red, red to green).`,
        ``,
      ]
      : []),
  ];
  return { console: consoleLines, report };
}
