import { decode } from "fast-png";
import { assert, assertEquals } from "../assert.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { e2e, type ServerHandle, sharedServerChecks, structured, textOf } from "./harness.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";

interface Shot {
  uri: string;
  mime_type: string;
  rendezvous: string;
  source: { kind: string; ordinal?: number };
}
type Rgb = [number, number, number];

async function imageBytes(server: ServerHandle, uri: string): Promise<Uint8Array> {
  const read = await server.client.readResource({ uri });
  return Uint8Array.fromBase64((read.contents[0] as { blob?: string }).blob ?? "");
}

/** The colour of one pixel of the post-action image. */
async function pixel(server: ServerHandle, shot: Shot, x: number, y: number): Promise<Rgb> {
  const bytes = await imageBytes(server, shot.uri);
  if (shot.mime_type === "image/png") {
    const img = decode(bytes);
    const at = (y * img.width + x) * img.channels;
    return [img.data[at], img.data[at + 1], img.data[at + 2]];
  }
  const img = decodeJpeg(bytes);
  const at = (y * img.width + x) * 4;
  return [img.data[at], img.data[at + 1], img.data[at + 2]];
}

const isRed = ([r, g, b]: Rgb) => r > 160 && g < 90 && b < 90;
const isBlue = ([r, _g, b]: Rgb) => b > 140 && r < 90;
const isGreen = ([r, g, b]: Rgb) => g > 120 && r < 90 && b < 90;
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

async function firstClicks(server: ServerHandle, site: StaticServer): Promise<void> {
  // Plain, an app that paints again right after load, a spinner that keeps frames in flight, noise that
  // makes every frame slow to deliver: each first click turns the page from blue to red at once.
  const stale: string[] = [];
  for (const variant of ["", "&staged", "&spin", "&noise"]) {
    for (let i = 0; i < 8; i++) {
      const url = `${site.origin}/first_click.html?i=${i}${variant}`;
      const nav = structured(await server.call("navigate_page", { url }));
      const before = nav.screenshot as Shot;
      const navColour = await pixel(server, before, 8, 8);
      if (!isBlue(navColour)) stale.push(`navigation ${url}: ${before.source.kind} rgb(${navColour})`);

      const result = await server.call("click", { x: 640, y: 360 });
      const clicked = structured(result);
      assertEquals(clicked.status, "ok", textOf(result));
      assert(
        JSON.stringify(clicked.snapshot).includes("Clicked"),
        `${url}: the snapshot names the new state`,
      );
      const shot = clicked.screenshot as Shot;
      if (variant === "") assertEquals(clicked.settled, true, `${url}: static after the click`);
      const colour = await pixel(server, shot, 8, 8);
      const identical = sameBytes(
        await imageBytes(server, shot.uri),
        await imageBytes(server, before.uri),
      );
      if (identical || !isRed(colour)) {
        stale.push(
          `click ${url}: ${shot.source.kind} rgb(${colour})${identical ? " = pre-click frame" : ""}`,
        );
      }
    }
  }
  // A native button (hover and press styles) clicked through a locator: the banner turns red at once.
  for (let i = 0; i < 8; i++) {
    const url = `${site.origin}/save_banner.html?static&i=${i}`;
    await server.call("navigate_page", { url });
    const clicked = structured(await server.call("click", { locator: { role: "button", name: "Save" } }));
    const shot = clicked.screenshot as Shot;
    const colour = await pixel(server, shot, 640, 300);
    if (!isRed(colour)) stale.push(`click ${url}: ${shot.source.kind} rgb(${colour})`);
  }
  assertEquals(stale, [], "every observed image shows its own action's result");
}

/** The page's own click and replacement times, once it has replaced the banner (or after 2 s). */
const REPLACED = `new Promise((resolve) => {
  const done = () => resolve(window.__times);
  const poll = setInterval(() => window.__times.replaced && (clearInterval(poll), done()), 10);
  setTimeout(done, 2000);
})`;

async function replacedError(server: ServerHandle, site: StaticServer): Promise<void> {
  let judged = 0;
  for (let attempt = 0; attempt < 8 && judged < 2; attempt++) {
    await server.call("navigate_page", { url: `${site.origin}/save_banner.html?a=${attempt}` });
    const result = await server.call("click", { locator: { role: "button", name: "Save" } });
    const clicked = structured(result);
    assertEquals(clicked.status, "ok", textOf(result));
    const shown = await pixel(server, clicked.screenshot as Shot, 640, 300);
    assert(isRed(shown) || isGreen(shown), `the image shows the click's result, not rgb(${shown})`);
    const times = structured(await server.call("evaluate_page", { expression: REPLACED })).value as {
      click: number;
      replaced?: number;
    };
    // Judged when the image caught the error and the answer came inside the watch's cap.
    if (times.replaced === undefined || times.replaced - times.click > 400 || !isRed(shown)) continue;
    judged++;
    assertEquals(
      clicked.settled,
      false,
      `the error banner was replaced ${times.replaced - times.click} ms later`,
    );
    const id = clicked.interaction_id as string;
    assert(
      textOf(result).includes(`still changing`) &&
        textOf(result).includes(`temporal_debug_bundle {interaction_id: "${id}"}`),
      textOf(result),
    );
  }
  assert(judged > 0, "no attempt showed the error before its request answered");
}

async function settledOrNot(server: ServerHandle, site: StaticServer): Promise<void> {
  for (let i = 0; i < 4; i++) {
    // The error stays: the page is static after the click.
    await server.call("navigate_page", { url: `${site.origin}/save_banner.html?static&settled=${i}` });
    const result = await server.call("click", { locator: { role: "button", name: "Save" } });
    const clicked = structured(result);
    assertEquals(clicked.settled, true, textOf(result));
    assert(!textOf(result).includes("still changing"), textOf(result));
    assert(
      isRed(await pixel(server, clicked.screenshot as Shot, 640, 300)),
      "the error is what is shown",
    );
  }
  for (let i = 0; i < 2; i++) {
    await server.call("navigate_page", { url: `${site.origin}/first_click.html?spin&settled=${i}` });
    const result = await server.call("click", { x: 640, y: 360 });
    const clicked = structured(result);
    assertEquals(clicked.settled, false, textOf(result));
    assert(isRed(await pixel(server, clicked.screenshot as Shot, 8, 8)), "the click's result is shown");
  }
}

const BROWSER = { headless: true };

/**
 * The checks share one server process (its start is most of what each would otherwise cost under load),
 * each with a browser of its own, on pages of its own (a query no other check loads).
 */
Deno.test({
  name: "observation",
  ...e2e,
  fn: (t) =>
    sharedServerChecks(t, [
      [
        "first clicks on fresh pages return an image painted after the dispatch, never the frame before",
        firstClicks,
      ],
      ["an error replaced when the click's request answers is reported as still changing", replacedError],
      ["a page static after the click is settled; a spinner elsewhere keeps it changing", settledOrNot],
    ], BROWSER),
});
