import type { Protocol } from "devtools-protocol";
import { sanitizeUrl } from "./privacy.ts";
import type { BrowserSession } from "./session.ts";
import type { PageTarget } from "./targets.ts";

export type Detail = "concise" | "expanded" | "full";

/** Frames acquired per listing; a page with more reports the rest as source omissions. */
const FRAME_ACQUIRE_LIMIT = 200;
/** Local frames whose real origin is read in an isolated world; the rest are indeterminate. */
const ORIGIN_PROBES = 32;
/** Out-of-process frames briefly attached to read their frame-tree name. */
const OOPIF_NAME_PROBES = 16;
const PROBE_TIMEOUT_MS = 1_500;
const NAME_LIMIT = 100;
const PATH_LIMIT = 512;
const FRAMES_SHOWN: Record<Detail, number> = { concise: 20, expanded: 100, full: FRAME_ACQUIRE_LIMIT };

const ASSET_ACQUIRE_LIMIT = 2_000;
const ASSETS_SHOWN: Record<Detail, number> = { concise: 8, expanded: 50, full: ASSET_ACQUIRE_LIMIT };
export const ASSET_KINDS = ["document", "script", "stylesheet", "image", "font", "other"] as const;
export type AssetKind = typeof ASSET_KINDS[number];

export interface FrameRow {
  frame_id: string;
  parent_frame_id?: string;
  name: string;
  main: boolean;
  /** Whether the frame's document has the main document's origin; null when it could not be told. */
  same_origin: boolean | null;
  same_process: boolean;
  /** Only for the main document and same-origin, same-process frames: bounded, no query/fragment. */
  path?: string;
  /** Every other frame: origin-preserved, path-hashed URL. */
  url?: string;
}

/** Author-assigned frame names, shown whole only when short and free of control characters. */
export function frameName(raw: string | undefined): string {
  const flat = (raw ?? "").replace(/[\p{Cc}\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/gu, " ")
    .replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length > NAME_LIMIT ? `${chars.slice(0, NAME_LIMIT - 1).join("")}…` : flat;
}

/** The real path of a qualified frame: pathname only (no query, fragment or credentials), bounded. */
export function framePath(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  let path: string;
  if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "file:") path = u.pathname;
  else if (u.protocol === "about:") path = `about:${u.pathname}`;
  else return undefined;
  const chars = [...path];
  return chars.length > PATH_LIMIT ? `${chars.slice(0, PATH_LIMIT - 1).join("")}…` : path;
}

/** Shortest unambiguous prefix (8, 12, then all characters) of each CDP frame id. */
function shortIds(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const len of [8, 12, 64]) {
    const seen = new Map<string, number>();
    for (const id of ids) seen.set(id.slice(0, len), (seen.get(id.slice(0, len)) ?? 0) + 1);
    for (const id of ids) if (!out.has(id) && seen.get(id.slice(0, len)) === 1) out.set(id, id.slice(0, len));
  }
  for (const id of ids) if (!out.has(id)) out.set(id, id);
  return out;
}

function flatten(
  tree: Protocol.Page.FrameTree,
  limit: number,
): { frames: Protocol.Page.Frame[]; total: number } {
  const frames: Protocol.Page.Frame[] = [];
  let total = 0;
  const stack = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node) break;
    total++;
    if (frames.length < limit) frames.push(node.frame);
    const children = node.childFrames ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return { frames, total };
}

/** The frame document's real origin ("null" when opaque), read in an isolated world. */
async function originOf(page: PageTarget, frameId: string): Promise<string | undefined> {
  try {
    const { executionContextId } = await page.send("Page.createIsolatedWorld", {
      frameId,
      worldName: "krometrail-frames",
    }, PROBE_TIMEOUT_MS);
    const r = await page.send("Runtime.evaluate", {
      expression: "self.origin",
      contextId: executionContextId,
      returnByValue: true,
    }, PROBE_TIMEOUT_MS);
    return typeof r.result.value === "string" ? r.result.value : undefined;
  } catch {
    return undefined;
  }
}

/** An out-of-process frame's name lives in its own process: attach briefly and read its tree. */
async function oopifName(
  session: BrowserSession,
  page: PageTarget,
  targetId: string,
): Promise<string | undefined> {
  let sessionId: string | undefined;
  try {
    sessionId = (await page.send("Target.attachToTarget", { targetId, flatten: true }, PROBE_TIMEOUT_MS))
      .sessionId;
    const { frameTree } = await session.sendToSession(
      sessionId,
      "Page.getFrameTree",
      undefined,
      PROBE_TIMEOUT_MS,
    );
    return frameTree.frame.name ?? "";
  } catch {
    return undefined;
  } finally {
    if (sessionId) page.send("Target.detachFromTarget", { sessionId }).catch(() => {});
  }
}

export interface FrameListing {
  frames: FrameRow[];
  total: number;
  omitted: { source: number; presentation: number };
}

/**
 * The page's frames: local (same-process) frames from the page's frame tree with their real origin,
 * then out-of-process frames from the browser's iframe targets. Only the main document and
 * same-origin, same-process frames carry a path (spec: Frame identity).
 */
export async function listFrames(
  session: BrowserSession,
  page: PageTarget,
  detail: Detail,
): Promise<FrameListing> {
  const { frameTree } = await page.send("Page.getFrameTree");
  const local = flatten(frameTree, FRAME_ACQUIRE_LIMIT);
  const origins = await Promise.all(
    local.frames.map((f, i) => (i < ORIGIN_PROBES ? originOf(page, f.id) : Promise.resolve(undefined))),
  );
  const mainOrigin = origins[0] ?? safeOrigin(frameTree.frame.url);
  const known = new Set(local.frames.map((f) => f.id));
  const { targetInfos } = await page.send("Target.getTargets");
  // Nested out-of-process frames hang off earlier ones (an iframe target's id is its frame id).
  const remote: Protocol.Target.TargetInfo[] = [];
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of targetInfos) {
      if (t.type !== "iframe" || known.has(t.targetId) || !t.parentFrameId || !known.has(t.parentFrameId)) {
        continue;
      }
      known.add(t.targetId);
      remote.push(t);
      grew = true;
    }
  }
  const total = local.total + remote.length;
  const room = Math.max(0, FRAME_ACQUIRE_LIMIT - local.frames.length);
  const acquiredRemote = remote.slice(0, room);
  const names = await Promise.all(
    acquiredRemote.map((t, i) => (i < OOPIF_NAME_PROBES ? oopifName(session, page, t.targetId) : undefined)),
  );
  const ids = shortIds([...local.frames.map((f) => f.id), ...acquiredRemote.map((t) => t.targetId)]);
  const short = (id: string | undefined) => (id ? ids.get(id) ?? id.slice(0, 8) : undefined);
  const rows: FrameRow[] = local.frames.map((f, i) => {
    const main = i === 0;
    const origin = origins[i];
    const sameOrigin = main ? true : origin === undefined ? null : origin !== "null" && origin === mainOrigin;
    const path = sameOrigin ? framePath(f.url) : undefined;
    return {
      frame_id: short(f.id) ?? f.id,
      ...(f.parentId ? { parent_frame_id: short(f.parentId) } : {}),
      name: frameName(f.name),
      main,
      same_origin: sameOrigin,
      same_process: true,
      ...(path !== undefined ? { path } : { url: sanitizeUrl(f.url).redacted }),
    };
  });
  acquiredRemote.forEach((t, i) => {
    rows.push({
      frame_id: short(t.targetId) ?? t.targetId,
      parent_frame_id: short(t.parentFrameId),
      name: frameName(names[i]),
      main: false,
      // Out of process means another site for a direct child; deeper ones cannot be told apart.
      same_origin: safeOrigin(t.url) === mainOrigin ? null : false,
      same_process: false,
      url: sanitizeUrl(t.url).redacted,
    });
  });
  const shown = rows.slice(0, FRAMES_SHOWN[detail]);
  return {
    frames: shown,
    total,
    omitted: { source: total - rows.length, presentation: rows.length - shown.length },
  };
}

function safeOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export interface AssetRow {
  kind: AssetKind;
  url: string;
  frame_id: string;
  mime_type?: string;
  bytes?: number;
  failed?: true;
  canceled?: true;
}

export interface AssetInventory {
  counts: Record<AssetKind, number>;
  total: number;
  sample: AssetRow[];
  omitted: { source: number; presentation: number };
}

const KIND_OF: Partial<Record<Protocol.Network.ResourceType, AssetKind>> = {
  Document: "document",
  Script: "script",
  Stylesheet: "stylesheet",
  Image: "image",
  Font: "font",
};

/**
 * Page assets from the page's resource tree (each local frame's document plus its resources), with
 * privacy-bounded URLs. Acquisition finishes, bounded, before anything is presented; the counts by
 * kind cover every row the browser reported.
 */
export async function listAssets(page: PageTarget, detail: Detail): Promise<AssetInventory> {
  const { frameTree } = await page.send("Page.getResourceTree");
  const counts = Object.fromEntries(ASSET_KINDS.map((k) => [k, 0])) as Record<AssetKind, number>;
  const rows: AssetRow[] = [];
  let total = 0;
  const frameIds: string[] = [];
  const add = (row: Omit<AssetRow, "frame_id">, frameId: string) => {
    total++;
    counts[row.kind]++;
    if (rows.length < ASSET_ACQUIRE_LIMIT) rows.push({ ...row, frame_id: frameId });
  };
  const stack: Protocol.Page.FrameResourceTree[] = [frameTree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node) break;
    frameIds.push(node.frame.id);
    add(
      { kind: "document", url: sanitizeUrl(node.frame.url).redacted, mime_type: node.frame.mimeType },
      node.frame.id,
    );
    for (const r of node.resources) {
      add({
        kind: KIND_OF[r.type] ?? "other",
        url: sanitizeUrl(r.url).redacted,
        ...(r.mimeType ? { mime_type: r.mimeType.slice(0, 100) } : {}),
        ...(r.contentSize !== undefined && r.contentSize > 0 ? { bytes: r.contentSize } : {}),
        ...(r.failed ? { failed: true as const } : {}),
        ...(r.canceled ? { canceled: true as const } : {}),
      }, node.frame.id);
    }
    for (const child of node.childFrames ?? []) stack.push(child);
  }
  const ids = shortIds(frameIds);
  const order = (k: AssetKind) => ASSET_KINDS.indexOf(k);
  rows.sort((a, b) => order(a.kind) - order(b.kind) || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const sample = rows.slice(0, ASSETS_SHOWN[detail]).map((r) => ({
    ...r,
    frame_id: ids.get(r.frame_id) ?? r.frame_id,
  }));
  return {
    counts,
    total,
    sample,
    omitted: { source: total - rows.length, presentation: rows.length - sample.length },
  };
}
