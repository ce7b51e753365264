/**
 * Visual predicates over recorded frames, in real Chromium: fixtures/site/visual_flip.html turns a grey box
 * red 400 ms after a click and grey again 700 ms later, and records its own time of each change
 * (window.__truth). bisect over stdio, and scanVisual over the index directly after stop_browser, find
 * both moments from the pixels alone.
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, withServer } from "./harness.ts";
import { scanVisual } from "../../src/temporal/visual_scan.ts";
import { ToolError } from "../../src/errors.ts";

interface Truth {
  what: string;
  at_epoch_ms: number;
}

/** The box's inside (the box is 240×160 at 40,40 CSS px). */
const BOX = { x: 60, y: 60, width: 200, height: 120 };

/** The page's own clock onto the session clock, through the server's wall-clock range form. */
async function sessionMsOf(server: ServerHandle, epochMs: number): Promise<number> {
  const r = structured(
    await server.call("resolve_temporal_range", {
      range: { start_time: new Date(epochMs).toISOString(), end_time: new Date(epochMs + 100).toISOString() },
    }),
  );
  return Number((r.range as { start_ms: number }).start_ms) + (epochMs % 1);
}

/** Opens the flip page, clicks Go and waits out both changes; the page's times on the session clock. */
async function flipOnce(
  server: ServerHandle,
  origin: string,
): Promise<{ interaction: string; red: number; grey: number }> {
  const nav = await server.call("navigate_page", { url: `${origin}/visual_flip.html` });
  assert(!nav.isError, nav.content[0]?.text);
  await new Promise((r) => setTimeout(r, 400));
  const clicked = structured(await server.call("click", { selector: "#go" }));
  await new Promise((r) => setTimeout(r, 1_600));
  const truth = structured(await server.call("evaluate_page", { expression: "window.__truth" }))
    .value as Truth[];
  const at = (what: string) => truth.find((t) => t.what === what)?.at_epoch_ms;
  const redAt = at("red");
  const greyAt = at("grey");
  assert(redAt !== undefined && greyAt !== undefined, JSON.stringify(truth));
  return {
    interaction: String(clicked.interaction_id),
    red: await sessionMsOf(server, redAt),
    grey: await sessionMsOf(server, greyAt),
  };
}

/**
 * The change lies between the two consecutive frames the scan reports: the last one painted without it and
 * the first painted with it (within 5 ms, the paint-time mapping's and the page clock's error). A loaded
 * machine paints late, so the interval itself is only sanity-bounded.
 */
function assertBracket(t: { at_ms: number; after_ms: number }, truthMs: number, what: string): void {
  const msg = `${what}: frames at ${t.after_ms} and ${t.at_ms} ms, the page changed it at ${truthMs} ms`;
  assert(t.after_ms <= truthMs + 5 && t.at_ms >= truthMs - 5, msg);
  assert(t.at_ms - truthMs <= 500, msg);
}

const bracket = (t: { at_ns: number; previous_at_ns: number }) => ({
  at_ms: t.at_ns / 1e6,
  after_ms: t.previous_at_ns / 1e6,
});

Deno.test({
  name: "visual bisect: scanVisual over the index finds the box turning red and grey again from its frames",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const flip = await flipOnce(server, site.origin);
      const status = structured(await server.call("browser_status", {}));
      const stopped = await server.call("stop_browser", {});
      assert(!stopped.isError, stopped.content[0]?.text);
      const instances = [...Deno.readDirSync(join(server.dataDir, "instances"))];
      const db = new DatabaseSync(join(server.dataDir, "instances", instances[0].name, "index.sqlite"), {
        readOnly: true,
      });
      try {
        const row = db.prepare(
          "SELECT session_id, page_id FROM frames ORDER BY recv_ns DESC LIMIT 1",
        ).get() as { session_id: string; page_id: string };
        assert(row, JSON.stringify(status));
        const from = (flip.red - 300) * 1e6;
        const to = (flip.grey + 300) * 1e6;

        const color = await scanVisual(db, row.session_id, row.page_id, from, to, {
          kind: "regionColor",
          region: BOX,
          color: "#ff0000",
          tolerance: 40,
        });
        assertEquals(color.initial, false);
        assertEquals(color.final, false);
        assertEquals(color.transitions.map((t) => t.to), [true, false], JSON.stringify(color.transitions));
        assertBracket(bracket(color.transitions[0]), flip.red, "red");
        assertBracket(bracket(color.transitions[1]), flip.grey, "grey");
        assert(color.transitions.every((t) => t.exact && t.previous_at_ns < t.at_ns));
        assert(color.probes === color.frames_in_window + (color.baseline.on_screen_at_start ? 1 : 0));
        assertEquals(color.sampled, undefined);
        assertEquals(color.unreadable, 0);
        const red = color.transitions[0].measure as { mean_color: string; distance: number };
        assert(red.distance <= 40, JSON.stringify(red));

        // Changed from the window's first frame (grey): true while red, false once grey again.
        const changed = await scanVisual(db, row.session_id, row.page_id, from, to, {
          kind: "regionChanged",
          region: BOX,
          threshold: 0.5,
        });
        assertEquals(changed.initial, false);
        assertEquals(changed.transitions.map((t) => [t.from, t.to]), [[false, true], [true, false]]);
        assertEquals(changed.transitions.map((t) => t.frame_id), color.transitions.map((t) => t.frame_id));
        assertEquals((changed.transitions[0].measure as { changed_share: number }).changed_share, 1);

        // Under a budget smaller than the window the scan samples, says so, and what it reports brackets a change.
        const budget = color.probes - 1;
        assert(budget >= 2, `baseline, red and grey frames at least: ${color.probes}`);
        const few = await scanVisual(db, row.session_id, row.page_id, from, to, {
          kind: "regionColor",
          region: BOX,
          color: "#ff0000",
          tolerance: 40,
        }, { maxProbes: budget });
        assertEquals([few.sampled, few.probes], [true, budget]);
        for (const t of few.transitions) {
          const truth = t.to ? flip.red : flip.grey;
          assert(t.previous_at_ns / 1e6 <= truth + 5 && t.at_ns / 1e6 >= truth - 5, JSON.stringify(t));
        }

        // A region the page never changes: no transition.
        const still = await scanVisual(db, row.session_id, row.page_id, from, to, {
          kind: "regionChanged",
          region: { x: 400, y: 40, width: 200, height: 160 },
          threshold: 0,
        });
        assertEquals(still.transitions, []);

        // A region outside the viewport, and a window no frame shows, are refused.
        const outside = await assertRejects(() =>
          scanVisual(db, row.session_id, row.page_id, from, to, {
            kind: "regionColor",
            region: { x: 90_000, y: 0, width: 10, height: 10 },
            color: "#000000",
          })
        );
        assert(outside instanceof ToolError && outside.code === "predicate_not_applicable", String(outside));
        const empty = await assertRejects(() =>
          scanVisual(db, row.session_id, "no-such-page", from, to, { kind: "regionChanged", region: BOX })
        );
        assert(empty instanceof ToolError && empty.code === "no_source_frames", String(empty));
      } finally {
        db.close();
      }
    }, { browser: {} }),
});

Deno.test({
  name: "visual bisect: bisect over stdio with regionColor and regionChanged, no selector",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const flip = await flipOnce(server, site.origin);
      const red = await server.call("bisect", {
        range: { interaction_id: flip.interaction, after_ms: 1_500 },
        predicate: { kind: "regionColor", region: BOX, color: "#ff0000", tolerance: 40 },
      });
      assert(!red.isError, red.content[0]?.text);
      const rs = structured(red);
      console.error(red.content[0]?.text);
      const transitions = rs.transitions as Array<
        { at_ms: number; after_ms: number; from: unknown; to: unknown; frame: { frame_id: number } | null }
      >;
      assertEquals(transitions.map((t) => t.to), [true, false], red.content[0]?.text);
      assertBracket(transitions[0], flip.red, "red");
      assertBracket(transitions[1], flip.grey, "grey");
      assert(transitions.every((t) => typeof t.frame?.frame_id === "number"), JSON.stringify(transitions));
      assertEquals(rs.initial, false);
      assert(Number(rs.probes) >= 2, String(rs.probes));

      const changed = await server.call("bisect", {
        range: { interaction_id: flip.interaction, after_ms: 1_500 },
        predicate: { kind: "regionChanged", region: BOX, threshold: 0.5 },
      });
      assert(!changed.isError, changed.content[0]?.text);
      const cs = structured(changed).transitions as Array<{ at_ms: number; after_ms: number; to: unknown }>;
      assertEquals(cs.map((t) => t.to), [true, false], changed.content[0]?.text);
      assertBracket(cs[0], flip.red, "changed");

      // A DOM predicate still needs its selector; a visual one refuses a region outside the viewport.
      const noSelector = await server.call("bisect", { predicate: { kind: "exists" } });
      assert(noSelector.isError, noSelector.content[0]?.text);
      const outside = await server.call("bisect", {
        predicate: {
          kind: "regionColor",
          region: { x: 90_000, y: 0, width: 5, height: 5 },
          color: "#000000",
        },
      });
      assertEquals(errorCode(outside), "predicate_not_applicable", outside.content[0]?.text);
    }, { browser: {} }),
});
