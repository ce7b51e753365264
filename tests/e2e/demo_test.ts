/**
 * The demo shows time: run as a user runs it (the real CLI, a fresh data dir, headless Chrome), it
 * records the bundled fixture's click with a brief wrong state and writes the click's storyboard and
 * difference map, which report.md shows; the storyboard's pixels hold the wrong state and the right one.
 * With KROMETRAIL_WRITE_DOCS_IMAGES=1 the pictures are copied to docs/images/ for the README.
 */
import { decode } from "fast-png";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { assert, assertEquals } from "../assert.ts";
import { e2e, REPO_ROOT } from "./harness.ts";

type Rgb = readonly [number, number, number];

/** The fixture's banner colours (fixtures/site/demo_transition.html); no other state uses them. */
const WRONG: Rgb = [0xe0, 0x00, 0x00];
const RIGHT: Rgb = [0x00, 0xa0, 0x40];
/** Per channel, for JPEG frames scaled into tiles. */
const TOLERANCE = 40;
/**
 * The 560×200 px banner is ~10,000 px in one storyboard tile of a 1280 px wide viewport (less its text):
 * a quarter of that is the banner seen, not a stray edge of something else.
 */
const MIN_PIXELS = 2_500;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function pixelsNear(png: Uint8Array, colour: Rgb): number {
  const img = decode(png);
  assertEquals(img.depth, 8, "an 8-bit PNG");
  const step = img.channels;
  assert(step >= 3, `a colour PNG (${step} channels)`);
  let count = 0;
  for (let i = 0; i + 2 < img.data.length; i += step) {
    if (
      Math.abs(img.data[i] - colour[0]) <= TOLERANCE && Math.abs(img.data[i + 1] - colour[1]) <= TOLERANCE &&
      Math.abs(img.data[i + 2] - colour[2]) <= TOLERANCE
    ) count++;
  }
  return count;
}

Deno.test({
  name: "the demo records a click with a brief wrong state and its storyboard shows that state",
  ...e2e,
  fn: async () => {
    const out = await Deno.makeTempDir({ prefix: "krometrail-demo-out-" });
    const data = await Deno.makeTempDir({ prefix: "krometrail-demo-data-" });
    try {
      const run = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "demo", "--out", out],
        cwd: REPO_ROOT,
        env: { KROMETRAIL_DATA_DIR: data, KROMETRAIL_HEADLESS: "1", NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(run.stdout);
      assertEquals(run.code, 0, `${stdout}\n${new TextDecoder().decode(run.stderr)}`);

      // The printed step lines name the transient the bundle found, with its time on screen.
      assert(
        /transient: a red area at \d+,\d+ \d+×\d+ px on screen for \d+ ms/.test(stdout),
        `the bundle step names the red state:\n${stdout}`,
      );

      const report = await Deno.readTextFile(`${out}/report.md`);
      assert(report.includes("![Storyboard of the Save click](storyboard.png)"), report);
      assert(report.includes("![Difference map of the Save click](difference-map.png)"), report);
      assert(/The bundle found the wrong state: a red area .* on screen for \d+ ms/.test(report), report);

      const storyboard = await Deno.readFile(`${out}/storyboard.png`);
      const diffMap = await Deno.readFile(`${out}/difference-map.png`);
      for (const [name, png] of [["storyboard", storyboard], ["difference map", diffMap]] as const) {
        assertEquals([...png.slice(0, 8)], PNG_SIGNATURE, `${name} is a PNG`);
      }
      // The storyboard's frames include the wrong state (red banner) and the right one (green banner).
      const wrong = pixelsNear(storyboard, WRONG);
      const right = pixelsNear(storyboard, RIGHT);
      assert(wrong >= MIN_PIXELS, `the storyboard shows the red wrong state: ${wrong} px near #e00000`);
      assert(right >= MIN_PIXELS, `the storyboard shows the green right state: ${right} px near #00a040`);

      if (Deno.env.get("KROMETRAIL_WRITE_DOCS_IMAGES") === "1") {
        await Deno.mkdir(`${REPO_ROOT}docs/images`, { recursive: true });
        await Deno.writeFile(`${REPO_ROOT}docs/images/storyboard.png`, storyboard);
        await Deno.writeFile(`${REPO_ROOT}docs/images/difference-map.png`, diffMap);
      }
    } finally {
      await Deno.remove(out, { recursive: true }).catch(() => {});
      await Deno.remove(data, { recursive: true }).catch(() => {});
    }
  },
});
