/**
 * localStorage and sessionStorage of an origin through the DOMStorage domain. Chrome resolves a storage id
 * through a frame of its storage key ("Frame not found for the given storage id" otherwise, Chromium 156),
 * so every call first finds a frame of the origin in the page; sessionStorage is that tab's own.
 */
import type { Protocol } from "devtools-protocol";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";

const CDP_MS = 10_000;

export type StorageArea = "local" | "session";

/** Every frame of the page with its security origin, main frame first. */
export async function pageFrames(page: PageTarget): Promise<{ id: string; origin: string }[]> {
  const { frameTree } = await page.send("Page.getFrameTree", undefined, CDP_MS);
  const out: { id: string; origin: string }[] = [];
  const walk = (t: Protocol.Page.FrameTree) => {
    out.push({ id: t.frame.id, origin: t.frame.securityOrigin });
    for (const c of t.childFrames ?? []) walk(c);
  };
  walk(frameTree);
  return out;
}

export function originNotOpen(origin: string, pageId: string, open: readonly string[]): ToolError {
  const shown = open.filter((o) => o.startsWith("http")).slice(0, 5);
  return new ToolError({
    code: "origin_not_open",
    message: `Page ${pageId} has no frame of ${origin}${
      shown.length ? ` (its frames: ${shown.join(", ")})` : ""
    }: Chrome reads and writes web storage only through a document of the origin.`,
    retry: "after_recovery",
    recovery:
      `navigate_page to a URL of ${origin} first (or pass the page_id of a page on it), then call again.`,
    affected: { page_id: pageId, argument: "origin" },
    details: { origin, frame_origins: shown },
  });
}

/** The storage id of `origin` in `page`, by one of its frames' storage key. */
export async function storageIdFor(
  page: PageTarget,
  origin: string,
  area: StorageArea,
): Promise<Protocol.DOMStorage.StorageId> {
  const frames = await pageFrames(page);
  const frame = frames.find((f) => f.origin === origin);
  if (!frame) throw originNotOpen(origin, page.id, frames.map((f) => f.origin));
  const isLocalStorage = area === "local";
  const key = await page.send("Storage.getStorageKey", { frameId: frame.id }, CDP_MS).then(
    (r) => r.storageKey,
    () => undefined,
  );
  return key ? { storageKey: key, isLocalStorage } : { securityOrigin: origin, isLocalStorage };
}

export async function readItems(
  page: PageTarget,
  id: Protocol.DOMStorage.StorageId,
): Promise<[string, string][]> {
  const { entries } = await page.send("DOMStorage.getDOMStorageItems", { storageId: id }, CDP_MS);
  return entries.map((e) => [e[0] ?? "", e[1] ?? ""]);
}

export async function writeItem(
  page: PageTarget,
  id: Protocol.DOMStorage.StorageId,
  key: string,
  value: string,
): Promise<void> {
  await page.send("DOMStorage.setDOMStorageItem", { storageId: id, key, value }, CDP_MS);
}

export async function removeItem(
  page: PageTarget,
  id: Protocol.DOMStorage.StorageId,
  key: string,
): Promise<void> {
  await page.send("DOMStorage.removeDOMStorageItem", { storageId: id, key }, CDP_MS);
}

export async function clearItems(page: PageTarget, id: Protocol.DOMStorage.StorageId): Promise<void> {
  await page.send("DOMStorage.clear", { storageId: id }, CDP_MS);
}
