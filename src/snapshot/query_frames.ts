/**
 * Frame selection for semantic queries: a frame is named by its author-assigned name or by a ref of
 * its <iframe> element, and qualifies only when it is same-origin and in the page's own process
 * (out-of-process frames are absent from the page's frame tree). Refusals say why.
 */
import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { type FrameFacts, frameRefusal } from "./query.ts";
import { decodeRef } from "./refs.ts";

export interface SelectedDocument {
  main: boolean;
  frame_id: string;
  /** The frame's author-assigned name (child frames only). */
  name?: string;
  url: string;
}

interface FrameEntry {
  frame: Protocol.Page.Frame;
  parent?: FrameEntry;
}

const NAME_SAMPLE = 10;

function flatten(
  tree: Protocol.Page.FrameTree,
  parent: FrameEntry | undefined,
  out: FrameEntry[],
): FrameEntry[] {
  const entry: FrameEntry = { frame: tree.frame, parent };
  out.push(entry);
  for (const child of tree.childFrames ?? []) flatten(child, entry, out);
  return out;
}

function shown(name: string): string {
  // deno-lint-ignore no-control-regex
  return name.replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, 40);
}

function frameError(code: string, message: string, recovery: string, details?: Record<string, unknown>) {
  return new ToolError({
    code,
    message,
    retry: code === "frame_not_qualified" ? "never" : "after_recovery",
    recovery,
    affected: { argument: "locator.frame" },
    ...(details ? { details } : {}),
  });
}

/** The frame an <iframe> ref owns, after checking the ref belongs to this page's document. */
async function frameIdOfRef(session: BrowserSession, page: PageTarget, ref: string): Promise<string> {
  const parts = decodeRef(ref);
  if (
    !parts || parts.session !== session.ordinal || parts.page !== page.ordinal ||
    parts.generation !== page.generation
  ) {
    throw frameError(
      "stale_ref",
      `Frame ref ${ref} does not belong to page ${page.id}'s current document.`,
      "Call snapshot_page for a fresh ref of the <iframe>, or name the frame.",
    );
  }
  const described = await page.send("DOM.describeNode", { backendNodeId: parts.node }).catch(() => undefined);
  if (!described) {
    throw frameError(
      "stale_ref",
      `Frame ref ${ref}'s element is gone.`,
      "Call snapshot_page for a fresh ref.",
    );
  }
  if (!described.node.frameId) {
    throw frameError(
      "invalid_frame",
      `Ref ${ref} is a <${described.node.localName}>, not a frame element.`,
      "Pass the ref of an <iframe> element, or the frame's name.",
    );
  }
  return described.node.frameId;
}

async function originOf(page: PageTarget, frameId: string): Promise<string | undefined> {
  try {
    const { executionContextId } = await page.send("Page.createIsolatedWorld", {
      frameId,
      worldName: "krometrail-query",
    });
    const r = await page.send("Runtime.evaluate", {
      expression: "self.origin",
      contextId: executionContextId,
      returnByValue: true,
    });
    return typeof r.result.value === "string" ? r.result.value : undefined;
  } catch {
    return undefined;
  }
}

/** The main document, or the qualified frame `frame` names (a frame name or an <iframe> ref). */
export async function selectDocument(
  session: BrowserSession,
  page: PageTarget,
  frame: string | undefined,
): Promise<SelectedDocument> {
  if (frame === undefined && page.mainFrameId) {
    return { main: true, frame_id: page.mainFrameId, url: page.url };
  }
  const { frameTree } = await page.send("Page.getFrameTree");
  const entries = flatten(frameTree, undefined, []);
  if (frame === undefined) return { main: true, frame_id: frameTree.frame.id, url: page.url };
  let entry: FrameEntry | undefined;
  if (decodeRef(frame)) {
    const frameId = await frameIdOfRef(session, page, frame);
    entry = entries.find((e) => e.frame.id === frameId);
    if (!entry) {
      throw frameError(
        "frame_not_qualified",
        "That frame runs in another process (a cross-site frame), so it is not same-origin with the page.",
        "Query the main document, or open the frame's URL as a page of its own.",
      );
    }
  } else {
    const named = entries.filter((e) => e.parent && e.frame.name === frame);
    if (named.length !== 1) {
      const names = entries.filter((e) => e.parent).map((e) => shown(e.frame.name ?? ""));
      throw frameError(
        named.length === 0 ? "frame_not_found" : "frame_ambiguous",
        named.length === 0
          ? `No same-process frame is named ${JSON.stringify(shown(frame))}.`
          : `${named.length} frames are named ${JSON.stringify(shown(frame))}.`,
        "Name a frame from details.frame_names, or pass the ref of its <iframe> element from snapshot_page.",
        { frame_names: names.slice(0, NAME_SAMPLE), omitted: Math.max(0, names.length - NAME_SAMPLE) },
      );
    }
    entry = named[0];
  }
  if (!entry.parent) return { main: true, frame_id: entry.frame.id, url: page.url };
  const chain: FrameEntry[] = [];
  for (let e: FrameEntry | undefined = entry; e; e = e.parent) chain.unshift(e);
  const facts: FrameFacts[] = [];
  for (const e of chain) {
    const origin = await originOf(page, e.frame.id);
    if (origin === undefined) {
      throw frameError(
        "frame_not_qualified",
        "The frame's document is not reachable (still loading, or not in this page's process).",
        "Wait for the frame to load, then query again.",
      );
    }
    facts.push({ url: e.frame.url, origin });
  }
  const refusal = frameRefusal(facts);
  if (refusal) {
    throw frameError(
      "frame_not_qualified",
      `Frame ${JSON.stringify(shown(entry.frame.name ?? ""))} does not qualify for queries: ${refusal}.`,
      "Query the main document instead; a frame must be same-origin and in the page's process.",
      { reason: refusal },
    );
  }
  return {
    main: false,
    frame_id: entry.frame.id,
    ...(entry.frame.name ? { name: shown(entry.frame.name) } : {}),
    url: entry.frame.url,
  };
}
