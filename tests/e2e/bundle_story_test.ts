/**
 * The debug bundle tells the story of an action: it opens on the action's document, measures change
 * from the frame on screen at dispatch, names transient states in words, labels tiles plainly, lists
 * the pictures it made, and shows a reversal's extreme even when it looks exactly like the end.
 */
import { assert, assertEquals } from "../assert.ts";
import { signedMs } from "../../src/temporal/render/layout.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import type { RgbaImage } from "../../src/vision/image.ts";
import { e2e, type ServerHandle, sharedServerChecks, structured, textOf } from "./harness.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";
import { PASSING_MS } from "../../src/temporal/transients.ts";
import {
  extremesBeforeReturn,
  heldExtremesBeforeReturn,
  type ReversalParams,
  runReversal,
  showsReversal,
} from "./reversal_flow.ts";

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function resourceBytes(server: ServerHandle, uri: string): Promise<Uint8Array> {
  const res = await server.client.readResource({ uri });
  const blob = (res.contents[0] as { blob?: string }).blob ?? "";
  return Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
}

function pixel(img: RgbaImage, x: number, y: number): [number, number, number] {
  const i = (Math.round(y) * img.width + Math.round(x)) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

const isPanelBlue = ([r, g, b]: number[]) => r < 70 && g < 110 && b > 150;
const near = (a: number, b: number, tolerance: number) => Math.abs(a - b) <= tolerance;

interface Transient {
  bounds: Rect;
  colour: string | null;
  appeared_ms: number;
  replaced_ms: number;
  looks_final: "identical" | "nearly" | null;
}

async function firstClickStory(server: ServerHandle, site: StaticServer): Promise<void> {
  // The previous document is blue (and of another origin, so the fixture site's favicon request
  // comes with the next one); the next one commits, then paints 700 ms later.
  const previous = await server.call("navigate_page", {
    url: "data:text/html,<body style='background:%231040c0'>previous page</body>",
  });
  assert(!previous.isError, `navigate failed: ${textOf(previous)}`);
  const navigated = await server.call("navigate_page", { url: `${site.origin}/transient_late.html` });
  assert(!navigated.isError, `navigate failed: ${textOf(navigated)}`);
  const clicked = structured(await server.call("click", { locator: { role: "button", name: "Save" } }));
  assertEquals(clicked.status, "ok");
  const interaction = String(clicked.interaction_id);

  // A window that starts after the document committed but before it painted: the frame on
  // screen at its start is still the previous page's.
  const nav = structured(await server.call("query_browser_events", { kinds: ["navigation"] }));
  const commits = (nav.events as Array<{ session_time_ms: number }>).map((e) => e.session_time_ms);
  const committed = commits[commits.length - 1];
  const resolved = structured(
    await server.call("resolve_temporal_range", { interaction_id: interaction }),
  );
  const dispatch = (resolved.range as { anchor: { at_ms: number } }).anchor.at_ms;
  const beforeMs = Math.floor(dispatch - committed - 100);
  assert(beforeMs > 300, `the click came ${dispatch - committed} ms after the commit`);

  const result = await server.call("temporal_debug_bundle", {
    range: { interaction_id: interaction, before_ms: beforeMs },
    inline_images: false,
  });
  assert(!result.isError, `bundle failed: ${textOf(result)}`);
  const text = textOf(result);
  const bundle = structured(result);
  const [epoch] = bundle.bundles as Array<{
    measurements: {
      change_bounds: Rect | null;
      transient_states: Transient[];
      repeated_changes: Array<{ bounds: Rect; changes: number }>;
    };
    artifacts: Array<{ kind: string; tiles: Array<{ frame_id: number; uri: string; label: string }> }>;
    events: Array<{ kind: string; text: string | null }>;
  }>;

  // No tile from the previous document.
  const tiles = epoch.artifacts[0].tiles;
  for (const t of tiles) {
    const img = decodeJpeg(await resourceBytes(server, t.uri));
    assert(
      !isPanelBlue(pixel(img, 120, 320)),
      `tile #${t.frame_id} (${t.label}) shows the previous page`,
    );
  }
  assert(/frame\(s\) of the previous document left out/.test(text), "the header says what was left out");

  // Plain labels that fit, in story order.
  const labels = tiles.map((t) => t.label);
  assert(labels[0].startsWith("before click"), `first label ${labels[0]}`);
  assertEquals(labels[labels.length - 1], "settled");
  for (const l of labels) assert(l.length <= 24 && !/_/.test(l), `label "${l}"`);
  assert(labels.includes("first change"), `labels ${labels.join(" | ")}`);

  // Change measured from the frame on screen at dispatch: the document's own first paint (its
  // button and background) is not the click's change; the result box, the badge and the pressed
  // button are.
  const b = epoch.measurements.change_bounds;
  assert(b, "the click changed something");
  assert(
    b.y + b.height <= 200,
    `change bounds stay above the previous page's panel: ${JSON.stringify(b)}`,
  );
  assert(b.x + b.width >= 1180, `change bounds reach the result box: ${JSON.stringify(b)}`);

  // Transient states in words: the red error that the green confirmation replaced.
  const red = epoch.measurements.transient_states.find((s) => s.colour === "red");
  assert(red, `a red state: ${JSON.stringify(epoch.measurements.transient_states)}`);
  assert(
    near(red.bounds.x, 900, 24) && near(red.bounds.y, 20, 24) && near(red.bounds.width, 300, 32) &&
      near(red.bounds.height, 80, 32),
    `the red state is the result box: ${JSON.stringify(red.bounds)}`,
  );
  assert(
    red.appeared_ms > 0 && red.replaced_ms > red.appeared_ms && !red.looks_final,
    JSON.stringify(red),
  );
  const words = `appeared at ${signedMs(red.appeared_ms)} and was replaced at ${signedMs(red.replaced_ms)}`;
  const line = text.split("\n").find((l) => l.startsWith("- a red area at "));
  assert(
    line && /^- a red area at \d+,\d+ \d+×\d+ /.test(line) && line.includes(words),
    `in words:\n${text}`,
  );
  const badge = epoch.measurements.repeated_changes.find((r) => near(r.bounds.x, 560, 24));
  assert(
    badge && badge.changes >= 2,
    `the blinking badge changed more than once: ${JSON.stringify(badge)}`,
  );
  assert(new RegExp(`changed ${badge.changes} times between`).test(text), "and the header says so");

  // The pictures the bundle made, in the concise text, readable with resources/read.
  const uris = [...text.matchAll(/(Composite|Difference map)[^\n]*?(krometrail:\/\/\S+\.png)/g)];
  assertEquals(uris.map((m) => m[1]), ["Composite", "Difference map"]);
  assert(/resources\/read/.test(text), "the text says how to get them");
  for (const m of uris) {
    const png = await resourceBytes(server, m[2]);
    assertEquals([...png.slice(1, 4)], [0x50, 0x4e, 0x47], `${m[1]} is a PNG`);
  }

  // The browser's favicon request is not among the events nearest the changes.
  const all = structured(await server.call("query_browser_events", { kinds: ["request"] }));
  const favicon = (all.events as Array<{ text: string | null; level: string | null }>)
    .filter((e) => e.level === "error" && / 404$/.test(e.text ?? ""));
  assert(favicon.length > 0, "Chromium asked for a favicon (the fixtures have none)");
  const listed = new Set(epoch.events.map((e) => e.text));
  for (const f of favicon) assert(!listed.has(f.text), `favicon request ranked: ${f.text}`);
}

async function reversalStory(server: ServerHandle, site: StaticServer): Promise<void> {
  const p: ReversalParams = { dist: 480, hold: 150, back: 40, away: 150 };
  // A 40 px step back is too small a turn of the path of change to be a turning point on its own.
  // The capture itself can miss a short excursion on a loaded machine, or paint the 150 ms hold
  // late and catch the extreme only in passing: only runs whose source frames show the extreme
  // held (as long as the bundle needs to tell a stop from passing motion), then the return, can be
  // asked to show it as a state. Under heavy load about half the runs qualify; one of eight must.
  let judged = 0;
  for (let attempt = 0; attempt < 8 && judged === 0; attempt++) {
    const run = await runReversal(server, site.origin, p);
    if (
      !showsReversal(run.source, p) || heldExtremesBeforeReturn(run.source, p, PASSING_MS).length === 0
    ) {
      continue;
    }
    judged++;
    assert(
      showsReversal(run.tiles, p),
      `the storyboard shows the extreme before the return: tiles ${
        run.tiles.map((t) => `#${t.frame_id}@${t.x}`).join(" ")
      }; source ${run.source.map((t) => t.x).join(",")}`,
    );
    // The held extreme is named as a transient state, in words (its look may be the final one).
    const extremes = new Set(extremesBeforeReturn(run.source, p).map((f) => f.frame_id));
    // The state may be named from the frame that began it, painted a few px short of the extreme, as
    // long as the extreme frames lie inside it (frame ids follow capture order).
    const held = run.states.find((st) =>
      extremes.has(st.frame_id) ||
      [...extremes].some((id) =>
        id > st.frame_id && (st.replaced_by_frame_id === null || id < st.replaced_by_frame_id)
      )
    );
    assert(held, `a state at the extreme: ${JSON.stringify(run.states)}`);
    const when = signedMs(held.appeared_ms);
    assert(
      run.text.includes(`appeared at ${when} `) || run.text.includes(`as it ends at ${when},`),
      `the header says it in words:\n${run.text}`,
    );
  }
  assertEquals(judged, 1, "a run whose source frames show the extreme held, then the return");
}

const BROWSER = { headless: true };

/**
 * Both checks share one server process (its start is most of what each would otherwise cost under load),
 * each with a browser (and session) of its own: the first click's check reads its session's events from
 * the start, and needs the fixture site's favicon request, which a browser makes once.
 */
Deno.test({
  name: "bundle story",
  ...e2e,
  fn: (t) =>
    sharedServerChecks(t, [
      [
        "bundle story: a first click on a fresh page opens on its document, counts change from dispatch, names the transient states",
        firstClickStory,
      ],
      [
        "bundle story: a reversal whose extreme looks exactly like its rest shows the extreme before the return",
        reversalStory,
      ],
    ], BROWSER),
});
