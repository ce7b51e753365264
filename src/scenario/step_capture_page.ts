import type { PageTarget } from "../browser/targets.ts";

/**
 * The in-page halves of the scenario artifacts. They run in an isolated world of the main frame, so page
 * script can neither see nor patch what they use, and they never change the document (the caret sheet is
 * an adopted style sheet, not an element: no mutation observer or recorder sees it).
 */

/** One line of the DOM text; a [line, body] pair is a script/style whose body is digested outside the page. */
export type DomLine = string | [string, string];

/**
 * Walks the live document: one line per node, two spaces per depth, attributes sorted by name, `nonce`
 * without its value, form control state as `:value` / `:checked` / `:selected` / `:files` pseudo-attributes
 * (a password field only as `:value-length`),
 * text whitespace-collapsed, comments dropped (nothing shows them), open shadow roots and same-origin iframe
 * documents inline. Script and style bodies come back separately so the caller can digest them (crypto.subtle
 * exists only in secure contexts).
 */
const DOM_WALK = `(() => {
  const out = [];
  const q = (v) => JSON.stringify(String(v));
  const pad = (d) => "  ".repeat(d);
  const TEXTLESS = new Set(["button", "submit", "reset", "image", "checkbox", "radio", "file", "hidden"]);
  const pseudo = (el) => {
    const p = [];
    const tag = el.localName;
    if (tag === "input") {
      const type = (el.type || "text").toLowerCase();
      if (type === "checkbox" || type === "radio") {
        p.push(":checked=" + q(el.checked));
        if (el.indeterminate) p.push(":indeterminate=" + q(true));
      } else if (type === "file") {
        p.push(":files=" + q([...(el.files || [])].map((f) => f.name).join(",")));
      } else if (type === "password") {
        // Only its length: an undeclared password is still not evidence anyone should hold.
        p.push(":value-length=" + q(el.value.length));
      } else if (!TEXTLESS.has(type)) p.push(":value=" + q(el.value));
    } else if (tag === "textarea") p.push(":value=" + q(el.value));
    else if (tag === "select") p.push(":value=" + q(el.value));
    else if (tag === "option") p.push(":selected=" + q(el.selected));
    return p;
  };
  const walk = (node, depth) => {
    for (const child of node.childNodes) visit(child, depth);
  };
  const visit = (node, depth) => {
    if (node.nodeType === 3) {
      const text = node.data.replace(/\\s+/g, " ").trim();
      if (text) out.push(pad(depth) + q(text));
      return;
    }
    if (node.nodeType === 10) { out.push(pad(depth) + "<!doctype " + node.name + ">"); return; }
    if (node.nodeType !== 1) return;
    const el = node;
    const tag = el.localName;
    const attrs = [...el.attributes].map((a) => [a.name, a.value]).sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
      .map(([n, v]) => n === "nonce" ? n : n + "=" + q(v));
    const head = pad(depth) + "<" + [tag, ...attrs, ...pseudo(el)].join(" ");
    if (tag === "script" || tag === "style") { out.push([head, el.textContent || ""]); return; }
    out.push(head + ">");
    if (el.shadowRoot) {
      out.push(pad(depth + 1) + "#shadow-root (" + el.shadowRoot.mode + ")");
      walk(el.shadowRoot, depth + 2);
    }
    if (tag === "iframe" || tag === "frame") {
      let doc = null;
      try { doc = el.contentDocument; } catch { doc = null; }
      if (doc) { out.push(pad(depth + 1) + "#document"); walk(doc, depth + 2); }
      else out.push(pad(depth + 1) + "#document (not readable: cross-origin or not loaded)");
      return;
    }
    if (tag === "template") return;
    walk(el, depth + 1);
  };
  walk(document, 0);
  return out;
})()`;

/** Storage of the page's own origin, keys sorted; null lists where the origin has no storage (opaque). */
const STORAGE_READ = `(() => {
  const read = (s) => {
    try {
      const store = s();
      const keys = [];
      for (let i = 0; i < store.length; i++) keys.push(store.key(i));
      return keys.sort().map((k) => [k, store.getItem(k) ?? ""]);
    } catch { return null; }
  };
  let cookie = null;
  try { cookie = document.cookie; } catch { cookie = null; }
  return { origin: location.origin, local: read(() => localStorage), session: read(() => sessionStorage), cookie };
})()`;

const CARET_KEY = "__krometrailScenarioCaret";
/** Hides the text caret for one capture: it blinks (measured: 3 of 8 captures differ with focus). */
const CARET_HIDE = `(() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync("* { caret-color: transparent !important; }");
  globalThis.${CARET_KEY} = sheet;
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  return true;
})()`;
const CARET_SHOW = `(() => {
  const sheet = globalThis.${CARET_KEY};
  if (sheet) document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  globalThis.${CARET_KEY} = undefined;
  return true;
})()`;

const WORLD = "krometrail-scenario";
const worlds = new WeakMap<PageTarget, { loaderId?: string; contextId: number }>();

async function worldOf(page: PageTarget, timeoutMs: number): Promise<number> {
  const cached = worlds.get(page);
  if (cached && cached.loaderId === page.loaderId) return cached.contextId;
  if (!page.mainFrameId) throw new Error("the page has no main frame yet");
  const { executionContextId } = await page.send("Page.createIsolatedWorld", {
    frameId: page.mainFrameId,
    worldName: WORLD,
  }, timeoutMs);
  worlds.set(page, { loaderId: page.loaderId, contextId: executionContextId });
  return executionContextId;
}

/** Evaluates one of the scripts above in the scenario world; a context lost to a navigation is made again once. */
async function inWorld(page: PageTarget, expression: string, timeoutMs: number): Promise<unknown> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const contextId = await worldOf(page, timeoutMs);
      const r = await page.send(
        "Runtime.evaluate",
        { expression, contextId, returnByValue: true },
        timeoutMs,
      );
      if (r.exceptionDetails) {
        throw new Error(r.exceptionDetails.exception?.description?.split("\n")[0] ?? r.exceptionDetails.text);
      }
      return r.result.value;
    } catch (err) {
      lastError = err;
      worlds.delete(page);
    }
  }
  throw lastError;
}

export async function readDomLines(page: PageTarget, timeoutMs: number): Promise<DomLine[]> {
  const value = await inWorld(page, DOM_WALK, timeoutMs);
  if (!Array.isArray(value)) throw new Error("the DOM walk returned no lines");
  return value as DomLine[];
}

export interface PageStorage {
  origin: string;
  local: Array<[string, string]> | null;
  session: Array<[string, string]> | null;
  /** document.cookie as the page sees it; null where reading it throws (sandboxed, opaque). */
  cookie: string | null;
}

export async function readPageStorage(page: PageTarget, timeoutMs: number): Promise<PageStorage> {
  const value = await inWorld(page, STORAGE_READ, timeoutMs) as PageStorage | undefined;
  if (!value || typeof value.origin !== "string") throw new Error("the storage read returned nothing");
  return value;
}

/** Runs `body` with the caret hidden; showing it again is best effort (a navigation may have taken it). */
export async function withCaretHidden<T>(
  page: PageTarget,
  timeoutMs: number,
  body: () => Promise<T>,
): Promise<T> {
  const hidden = await inWorld(page, CARET_HIDE, timeoutMs).then(() => true, () => false);
  try {
    return await body();
  } finally {
    if (hidden) await inWorld(page, CARET_SHOW, timeoutMs).catch(() => {});
  }
}

/** The main frame's URL as Chrome has it now (fragment included), not as our last event said. */
export async function currentUrl(page: PageTarget, timeoutMs: number): Promise<string> {
  const { frameTree } = await page.send("Page.getFrameTree", undefined, timeoutMs);
  return frameTree.frame.url + (frameTree.frame.urlFragment ?? "");
}
