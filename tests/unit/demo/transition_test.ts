import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { type BundleView, describeTransition, type TransientView } from "../../../src/demo/transition.ts";

const red: TransientView = {
  bounds: { x: 560, y: 56, width: 560, height: 208 },
  colour: "red",
  appeared_ms: 102.8,
  replaced_ms: 402.8,
  duration_ms: 300,
  frame_id: 22,
  looks_final: null,
};

function view(states: TransientView[]): BundleView {
  return {
    measurements: { transient_states: states },
    artifacts: [
      {
        kind: "storyboard",
        uri: "krometrail://evidence/artifacts/s.png",
        tiles: [{ frame_id: 19, label: "before click" }, { frame_id: 22, label: "first change" }, {
          frame_id: 24,
          label: "settled",
        }],
      },
      { kind: "difference_map", uri: "krometrail://evidence/artifacts/d.png" },
    ],
  };
}

Deno.test("the demo names the red wrong state, its time on screen and its storyboard tile", () => {
  const { console: lines, report } = describeTransition(view([red]), [
    "storyboard.png",
    "difference-map.png",
  ]);
  assertEquals(
    lines[0],
    "transient: a red area at 560,56 560×208 px on screen for 300 ms (+102.8 ms to +402.8 ms after the click, frame #22)",
  );
  assertEquals(lines[1], "wrote storyboard.png, difference-map.png");
  const text = report.join("\n");
  assertMatch(text, /The bundle found the wrong state: a red area .* on screen for 300 ms/);
  assertMatch(text, /tile 2 of 3 in the storyboard \("first change"\)/);
  assert(text.includes("![Storyboard of the Save click](storyboard.png)"), text);
  assert(text.includes("![Difference map of the Save click](difference-map.png)"), text);
});

Deno.test("the demo prefers the red state over one that looked final, and counts the others", () => {
  const final: TransientView = {
    ...red,
    colour: "green",
    appeared_ms: 20,
    frame_id: 21,
    looks_final: "nearly",
  };
  const orange: TransientView = { ...red, colour: "orange", appeared_ms: 500, frame_id: 30 };
  const { console: lines } = describeTransition(view([final, red, orange]), []);
  assertMatch(lines[0], /^transient: a red area /);
  assertEquals(lines[1], "and 2 more transient state(s)");
  assertEquals(lines.length, 2, "no files were written, none are named");
});

Deno.test("the demo says so when the bundle found no transient state, and links only the files written", () => {
  const { console: lines, report } = describeTransition(view([]), ["storyboard.png"]);
  assertEquals(lines[0], "transient: none found");
  const text = report.join("\n");
  assertMatch(text, /found no transient state this time/);
  assert(text.includes("(storyboard.png)"), text);
  assert(!text.includes("difference-map.png"), text);
});
