/** A real Chromium session with the DOM recorder installed the way start_browser installs it. */
import type { CdpConnection } from "../../src/browser/cdp.ts";
import type { BrowserSession } from "../../src/browser/session.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import type { DomBatchMessage } from "../../src/capture/messages.ts";
import { serveStatic, type StaticServer } from "../../src/demo/static_server.ts";
import type { RecorderStartOptions } from "../../src/pagestate/page/recorder_page.ts";
import { prepareDomRecording, recordPageDom } from "../../src/pagestate/recorder.ts";
import { withScratchSession } from "./scratch_session.ts";

export interface RrwebEvent {
  type: number;
  timestamp: number;
  data: Record<string, unknown>;
}

export interface Recorded {
  session: BrowserSession;
  /** The session's own browser connection. */
  conn: CdpConnection;
  /** The fixture site (fixtures/site). */
  site: StaticServer;
  /** Pages written by the test. */
  pages: StaticServer;
  batches: DomBatchMessage[];
  /** Every event with its page and its time on the session clock. */
  events(pageId?: string): Array<RrwebEvent & { page_id: string; session_ms: number }>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function evaluate(page: PageTarget, expression: string): Promise<unknown> {
  const r = await page.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
  return r.result.value;
}

async function centre(page: PageTarget, selector: string): Promise<{ x: number; y: number }> {
  return await evaluate(
    page,
    `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`,
  ) as { x: number; y: number };
}

export async function click(page: PageTarget, selector: string): Promise<void> {
  const { x, y } = await centre(page, selector);
  await page.send("Input.dispatchMouseEvent", { type: "mousePressed", x, y, button: "left", clickCount: 1 });
  await page.send("Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "left", clickCount: 1 });
}

export async function typeInto(page: PageTarget, selector: string, text: string): Promise<void> {
  await click(page, selector);
  for (const ch of text) {
    await page.send("Input.dispatchKeyEvent", { type: "keyDown", text: ch, key: ch });
    await page.send("Input.dispatchKeyEvent", { type: "keyUp", key: ch });
  }
}

/** Waits until `done` holds over the batches received so far (bounded). */
export async function until(done: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    if (done()) return true;
    await sleep(25);
  }
  return done();
}

/**
 * Launches headless Chromium, prepares the recorder before the session adopts a page (as start_browser
 * does) and collects every batch. `files` are written to a folder served beside fixtures/site.
 */
export async function withRecorder(
  opts: { record_dom?: boolean; options?: Partial<RecorderStartOptions>; files?: Record<string, string> },
  body: (r: Recorded) => Promise<void>,
): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "krometrail-domrec-site-" });
  for (const [name, text] of Object.entries(opts.files ?? {})) {
    await Deno.writeTextFile(`${root}/${name}`, text);
  }
  const site = serveStatic();
  const pages = serveStatic(`${root}/`);
  const batches: DomBatchMessage[] = [];
  try {
    await withScratchSession({
      record_dom: opts.record_dom ?? true,
      prefix: "krometrail-domrec-",
      prepare: (session) => prepareDomRecording(session, opts.options),
    }, async (session, conn) => {
      const recorded: Recorded = {
        session,
        conn,
        site,
        pages,
        batches,
        events(pageId) {
          return batches.filter((b) => !pageId || b.page_id === pageId).flatMap((b) =>
            (JSON.parse(b.payload) as RrwebEvent[]).map((e) => ({
              ...e,
              page_id: b.page_id,
              session_ms: e.timestamp - b.clock_offset_ms,
            }))
          );
        },
      };
      // The capture attaches after start, as SessionCapture does; batches from before wait for it.
      const off = recordPageDom(session, (m) => batches.push(m));
      try {
        await body(recorded);
      } finally {
        off();
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await site.close();
    await pages.close();
  }
}
