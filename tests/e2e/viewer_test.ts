/**
 * The evidence viewer end to end (issue 16): a real headless Chromium, driven by this test, opens the URL
 * open_viewer returns; it lists the session, its timeline holds exactly the index's frames, a click on
 * an interaction's tick shows that interaction's frame (pixels compared with fetch_source_frames), the
 * keyboard steps frames, the storyboard and difference map are made through the agent's tools, and
 * requests without the token, with a foreign Host or a foreign Origin are refused.
 * With KROMETRAIL_WRITE_DOCS_IMAGES=1 it also writes docs/images/viewer.png.
 */
import { chromium, type Page } from "playwright-core";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { e2e, fixtures, REPO_ROOT, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface LoadedImage {
  complete: boolean;
  naturalWidth: number;
}

const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";

/** Listening TCP ports of one process, read from /proc (its socket inodes against the LISTEN rows). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  const ports: number[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = Deno.readTextFileSync(file);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[3] === "0A" && inodes.has(cols[9])) {
        ports.push(parseInt(cols[1].split(":")[1], 16));
      }
    }
  }
  return ports;
}

/** One raw HTTP/1.1 request (fetch forbids a Host header of our choosing); returns status, headers, body. */
async function rawRequest(
  port: number,
  lines: string[],
  body = "",
): Promise<{ status: number; headers: string; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [...lines, `Content-Length: ${new TextEncoder().encode(body).length}`, "Connection: close"];
    await conn.write(new TextEncoder().encode(head.join("\r\n") + "\r\n\r\n" + body));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(16_384);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
    const [headers, ...rest] = text.split("\r\n\r\n");
    return {
      status: Number(headers.split(" ")[1]),
      headers: headers.toLowerCase(),
      body: rest.join("\r\n\r\n"),
    };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

/** Blocks per side of the luma grid: coarse enough to absorb JPEG noise and the browser's scaling. */
const GRID = 16;

/** Mean luma per block of a GRID×GRID grid over an RGBA image, and the whole image's mean. */
function blockLuma(
  data: ArrayLike<number>,
  width: number,
  height: number,
): { blocks: number[]; mean: number } {
  const sums = new Array<number>(GRID * GRID).fill(0);
  const counts = new Array<number>(GRID * GRID).fill(0);
  let total = 0;
  for (let y = 0; y < height; y++) {
    const by = Math.min(GRID - 1, Math.floor((y * GRID) / height));
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      const l = 0.299 * data[o] + 0.587 * data[o + 1] + 0.114 * data[o + 2];
      const b = by * GRID + Math.min(GRID - 1, Math.floor((x * GRID) / width));
      sums[b] += l;
      counts[b]++;
      total += l;
    }
  }
  return {
    blocks: sums.map((v, i) => v / Math.max(1, counts[i])),
    mean: total / Math.max(1, width * height),
  };
}

function jpegLuma(jpeg: Uint8Array): { blocks: number[]; mean: number } {
  const img = decodeJpeg(jpeg);
  return blockLuma(img.data, img.width, img.height);
}

function meanAbsDiff(a: number[], b: number[]): number {
  assertEquals(a.length, b.length, "grids of one size");
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i] - b[i]);
  return d / a.length;
}

interface CanvasPage {
  document: {
    querySelector(s: string): (LoadedImage & { clientWidth: number; clientHeight: number }) | null;
    createElement(tag: "canvas"): {
      width: number;
      height: number;
      getContext(kind: "2d"): {
        drawImage(img: unknown, x: number, y: number, w: number, h: number): void;
        getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
      } | null;
    };
  };
}

/**
 * What Chromium displays in an <img>: the decoded image drawn into a canvas at its on-screen size, read
 * back as RGBA (same-origin, so the canvas is not tainted), then reduced to the luma grid here.
 */
async function displayed(page: Page, selector: string): Promise<{ blocks: number[]; mean: number }> {
  // A new src is decoded before it is drawn: wait for the element to hold a loaded image.
  await page.waitForFunction((sel: string) => {
    const img = (globalThis as unknown as CanvasPage).document.querySelector(sel);
    return img !== null && img.complete && img.naturalWidth > 0;
  }, selector);
  const got = await page.evaluate((sel: string) => {
    const doc = (globalThis as unknown as CanvasPage).document;
    const img = doc.querySelector(sel);
    if (!img || !img.complete || img.naturalWidth === 0) return null;
    const canvas = doc.createElement("canvas");
    canvas.width = Math.max(1, img.clientWidth);
    canvas.height = Math.max(1, img.clientHeight);
    const ctx = canvas.getContext("2d");
    if (!ctx) return null;
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return {
      width: canvas.width,
      height: canvas.height,
      data: Array.from(ctx.getImageData(0, 0, canvas.width, canvas.height).data),
    };
  }, selector);
  assert(got, `${selector} is not a displayed image`);
  return blockLuma(got.data, got.width, got.height);
}

async function served(page: Page, selector: string): Promise<Uint8Array> {
  const src = await page.getAttribute(selector, "src");
  assert(src, `${selector} has no src`);
  const res = await fetch(new URL(src, page.url()));
  assertEquals(res.status, 200, `${selector} bytes`);
  return new Uint8Array(await res.arrayBuffer());
}

async function toolFrame(server: ServerHandle, sessionId: string, frameId: number): Promise<Uint8Array> {
  const got = await server.call("fetch_source_frames", { session_id: sessionId, frame_ids: [frameId] });
  const image = got.content.find((c) => c.type === "image");
  assert(image?.data, `fetch_source_frames inlined no image: ${textOf(got).slice(0, 200)}`);
  return Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0));
}

Deno.test({
  name:
    "viewer: open_viewer's URL lists the session, counts frames, scrubs to an interaction's frame, refuses strangers",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const pid = server.pid;
      assert(pid !== null, "server pid");
      assertEquals(listeningPorts(pid), [], "no port is opened before the viewer is used");

      await server.call("navigate_page", { url: `${site.origin}/viewer/flip.html` });
      const clicked = structured(await server.call("click", { selector: "#flip" }));
      const interactionId = String(clicked.interaction_id);
      await server.call("annotate", { at_ms: 1, label: "start of the story" });
      const sessionId = String(structured(await server.call("browser_status", {})).session_id);
      // A stopped session's frame count is final: the timeline must hold exactly the index's number.
      await server.call("stop_browser", {});
      const listed = structured(
        await server.call("list_source_frames", { session_id: sessionId, max_frames: 200 }),
      );
      const frames = listed.frames as Array<{ frame_id: number; page_id: string }>;
      const pageId = frames[0].page_id;
      const total = Number(
        structured(await server.call("list_source_frames", { session_id: sessionId, page_id: pageId }))
          .total_frame_count,
      );
      assert(total >= 2, `at least a dark and a light frame (got ${total})`);

      const opened = await server.call("open_viewer", { session_id: sessionId });
      const url = String(structured(opened).url);
      assert(textOf(opened).includes(url), "the text carries the deep link");
      assert(textOf(opened).length + JSON.stringify(opened.structuredContent).length < 400, "lean response");
      const entry = new URL(url);
      assertEquals(entry.hostname, "127.0.0.1");
      const port = Number(entry.port);
      const token = entry.pathname.split("/")[1];
      assertMatch(token, /^[A-Za-z0-9_-]{43}$/);
      assertEquals(listeningPorts(pid), [port], "the viewer's one port, opened on first use");
      const again = String(structured(await server.call("open_viewer", {})).url);
      assertEquals(new URL(again).pathname, entry.pathname, "one viewer per process");

      // Strangers: no token, a foreign Host (DNS rebinding), a foreign Origin, a form POST.
      const host = `Host: 127.0.0.1:${port}`;
      const noToken = await rawRequest(port, ["GET /api/sessions HTTP/1.1", host]);
      assertEquals([noToken.status, JSON.parse(noToken.body).error.code], [403, "viewer_token_required"]);
      const wrongToken = await rawRequest(port, [`GET /${token.slice(0, -2)}xx/api/sessions HTTP/1.1`, host]);
      assertEquals([wrongToken.status, JSON.parse(wrongToken.body).error.code], [
        403,
        "viewer_token_required",
      ]);
      const rebound = await rawRequest(port, [
        `GET /${token}/api/sessions HTTP/1.1`,
        `Host: evil.example:${port}`,
      ]);
      assertEquals([rebound.status, JSON.parse(rebound.body).error.code], [403, "viewer_host_refused"]);
      assert(!rebound.body.includes(sessionId), "a refusal holds no evidence");
      const foreign = await rawRequest(port, [
        `GET /${token}/api/sessions HTTP/1.1`,
        host,
        "Origin: http://evil.example",
      ]);
      assertEquals([foreign.status, JSON.parse(foreign.body).error.code], [403, "viewer_origin_refused"]);
      const form = await rawRequest(port, [
        `POST /${token}/api/questions/q-x/dismiss HTTP/1.1`,
        host,
        `Origin: http://127.0.0.1:${port}`,
        "Content-Type: text/plain",
      ], "{}");
      assertEquals(form.status, 403);
      const ok = await rawRequest(port, [`GET /${token}/api/sessions HTTP/1.1`, host]);
      assertEquals(ok.status, 200);
      assert(ok.body.includes(sessionId));
      for (
        const h of [
          "cache-control: no-store",
          "x-content-type-options: nosniff",
          "referrer-policy: no-referrer",
        ]
      ) {
        assert(ok.headers.includes(h), `missing ${h}`);
        assert(noToken.headers.includes(h), `refusal missing ${h}`);
      }
      assertMatch(ok.headers, /content-security-policy: default-src 'self'.*frame-ancestors 'none'/);
      assert(!ok.headers.includes("access-control-"), "no CORS header");

      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
        const problems: string[] = [];
        page.on("pageerror", (e) => problems.push(e.message));
        page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
        await page.goto(url);
        await page.waitForSelector(`#sessions [data-session-id="${sessionId}"]`);
        await page.waitForSelector(`#timeline[data-page-id="${pageId}"][data-frame-count="${total}"]`);
        assertEquals(await page.locator("#timeline .tick-frame").count(), total, "one tick per frame");
        assert(
          await page.locator("#timeline .tick-error").count() >= 1,
          "the console error is on the timeline",
        );
        assert(
          await page.locator("#timeline .tick-navigation").count() >= 1,
          "the navigation is on the timeline",
        );
        assert(await page.locator("#timeline .tick-marker").count() >= 1, "the marker is on the timeline");
        assertEquals(await page.getAttribute("#scrubber", "max"), String(total - 1));

        // The interaction's frame, from the agent's tools alone: the last frame the page received at or
        // before the click's observation ended (list_source_frames times, click's timing_ms.observed).
        const observedMs = Number((clicked.timing_ms as { observed?: number } | undefined)?.observed);
        assert(
          Number.isFinite(observedMs),
          `the click reports its observed end: ${JSON.stringify(clicked.timing_ms)}`,
        );
        const pageFrames = structured(
          await server.call("list_source_frames", {
            session_id: sessionId,
            page_id: pageId,
            max_frames: 200,
          }),
        ).frames as Array<{ frame_id: number; session_time_ms: number }>;
        assertEquals(pageFrames.length, total, "every frame of the page listed");
        const frame = pageFrames.filter((f) => f.session_time_ms <= observedMs).at(-1) ?? pageFrames[0];
        const frameOrdinal = pageFrames.indexOf(frame);
        const dispatchedMs = Number(
          (clicked.timing_ms as { dispatch?: number; start?: number }).dispatch ??
            (clicked.timing_ms as { start?: number }).start,
        );
        const beforeOrdinal = pageFrames.findLastIndex((f) => f.session_time_ms <= dispatchedMs);
        assert(beforeOrdinal >= 0 && beforeOrdinal < frameOrdinal, "a frame before the click");
        const expected = jpegLuma(await toolFrame(server, sessionId, frame.frame_id));
        const expectedDark = jpegLuma(await toolFrame(server, sessionId, pageFrames[beforeOrdinal].frame_id));

        // Start away from it, on the dark frame on screen when the click was dispatched (Home, then →).
        await page.keyboard.press("Home");
        await page.waitForSelector('img#frame[data-ordinal="0"]');
        for (let i = 0; i < beforeOrdinal; i++) await page.keyboard.press("ArrowRight");
        await page.waitForSelector(`img#frame[data-ordinal="${beforeOrdinal}"]`);
        const dark = await displayed(page, "img#frame");
        assert(dark.mean < 90, `the dark state before the click (mean luma ${dark.mean})`);
        assert(
          meanAbsDiff(dark.blocks, expectedDark.blocks) < 8,
          "the viewer shows the frame before the click",
        );
        await page.click(`.tick-interaction[data-interaction-id="${interactionId}"]`);
        await page.waitForSelector(`img#frame[data-ordinal="${frameOrdinal}"]`);
        const shown = await displayed(page, "img#frame");
        const toExpected = meanAbsDiff(shown.blocks, expected.blocks);
        const toDark = meanAbsDiff(shown.blocks, expectedDark.blocks);
        assert(
          toExpected < 8,
          `the viewer displays the interaction's own frame (block luma off by ${toExpected})`,
        );
        console.error(
          `viewer pixels: block luma ${toExpected.toFixed(1)} off the tools' frame, ${
            toDark.toFixed(1)
          } off the dark one`,
        );
        assert(toDark > 40, `and it differs clearly from the dark frame before the click (${toDark})`);
        assert(
          shown.mean > dark.mean + 80,
          `the light state after the click (${shown.mean} vs ${dark.mean})`,
        );
        assertEquals(await page.getAttribute("img#frame", "data-at-ms"), String(frame.session_time_ms));
        assertEquals(await page.textContent("#playhead-time"), `${frame.session_time_ms.toFixed(1)} ms`);

        // The keyboard steps frames; a click on the timeline moves the playhead to the time under it.
        if (frameOrdinal > 0) {
          await page.keyboard.press("ArrowLeft");
          await page.waitForSelector(`img#frame[data-ordinal="${frameOrdinal - 1}"]`);
        }
        const box = await page.locator("#timeline").boundingBox();
        assert(box, "timeline box");
        await page.mouse.click(box.x + 2, box.y + box.height - 4);
        await page.waitForSelector('img#frame[data-ordinal="0"]');

        // Storyboard and difference map of the range around the interaction, made by generate_artifacts.
        await page.click(`.tick-interaction[data-interaction-id="${interactionId}"]`);
        await page.click("#make-artifacts");
        await page.waitForFunction(
          (selectors: string[]) => {
            const doc =
              (globalThis as unknown as { document: { querySelector(s: string): LoadedImage | null } })
                .document;
            return selectors.every((s) => {
              const img = doc.querySelector(s);
              return img !== null && img.complete && img.naturalWidth > 0;
            });
          },
          ["#storyboard", "#difference-map"],
          { timeout: 30_000 },
        );
        const board = await served(page, "img#storyboard");
        assertEquals([...board.slice(0, 4)], [0x89, 0x50, 0x4e, 0x47], "a PNG storyboard");
        // The range's events (query_browser_events) and the DOM at the playhead (read_dom_at), light by now.
        await page.locator("#events li", { hasText: "flipped: a console error" }).waitFor();
        await page.locator("#dom", { hasText: 'h1#state "Light"' }).waitFor();
        assertEquals(problems, [], "the page ran without errors");

        if (Deno.env.get("KROMETRAIL_WRITE_DOCS_IMAGES") === "1") {
          await page.hover(`.tick-interaction[data-interaction-id="${interactionId}"]`);
          const out = join(REPO_ROOT, "docs", "images", "viewer.png");
          await Deno.mkdir(join(REPO_ROOT, "docs", "images"), { recursive: true });
          await page.screenshot({ path: out });
          console.error(`wrote ${out} (${(await Deno.stat(out)).size} bytes)`);
        }
      } finally {
        await browser.close();
      }
    }, { browser: { headless: true } }),
});

Deno.test({
  name:
    "viewer: `krometrail view URL --headless` prints the viewer URL and records the page live until SIGTERM",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-view-" });
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--frozen",
        ...SERVER_PERMISSIONS,
        "main.ts",
        "view",
        `${site.origin}/viewer/flip.html`,
        "--headless",
      ],
      cwd: REPO_ROOT,
      env: { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir, KROMETRAIL_HEADLESS: "", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      const line = out.split("\n")[0];
      const url = new URL(line);
      assertEquals(url.hostname, "127.0.0.1");
      const session = url.searchParams.get("session");
      assert(session, `the printed link names the live session: ${line}`);
      // The page is recorded while the command runs: the viewer sees the live session and its frames.
      let live: { live: boolean; pages: Array<{ frames: number; url: string | null }> } | undefined;
      // A headless launch beside a busy machine can take seconds: wait on the condition, up to 30 s.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const sessions = await (await fetch(new URL("api/sessions", url))).json() as {
          sessions: Array<
            { session_id: string; live: boolean; pages: Array<{ frames: number; url: string | null }> }
          >;
        };
        live = sessions.sessions.find((s) => s.session_id === session);
        if (live && live.pages.some((p) => p.frames > 0 && p.url?.endsWith("/viewer/flip.html"))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert(live?.live, "the session is live");
      assert(
        live.pages.some((p) => p.frames > 0 && p.url?.endsWith("/viewer/flip.html")),
        JSON.stringify(live),
      );
      child.kill("SIGTERM");
      const status = await child.status;
      assertEquals(status.code, 0, await stderr);
      assertMatch(await stderr, /Ctrl-C to stop/);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await stderr.catch(() => "");
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});
