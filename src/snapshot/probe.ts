import type { PageTarget } from "../browser/targets.ts";

/**
 * A cheap in-page fingerprint of everything the concise target index depends on: which elements
 * could be targets (by identity, so a replaced node changes it), their names, values, states and
 * visibility, and the focused element. Equal fingerprints let an automatic observation reuse the
 * last snapshot generation without re-reading the whole accessibility tree.
 *
 * It runs in an isolated world so the page cannot see or disturb the identity map.
 */
const PROBE = `(() => {
  const ids = globalThis.__ids ??= new WeakMap();
  globalThis.__next ??= 0;
  const idOf = (el) => { let id = ids.get(el); if (id === undefined) { id = ++globalThis.__next; ids.set(el, id); } return id; };
  const SEL = 'a[href],button,input,select,textarea,summary,details,option,[role],[tabindex],[contenteditable],[onclick],label,iframe,[aria-label],[aria-labelledby],[aria-hidden],[title],img[alt]';
  let h = 0x811c9dc5;
  const mix = (s) => { for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); } h ^= 124; h = Math.imul(h, 0x01000193); };
  let count = 0;
  const visit = (root) => {
    for (const el of root.querySelectorAll(SEL)) {
      count++;
      mix(String(idOf(el)));
      mix(el.tagName);
      for (const a of el.attributes) if (a.name !== "style" && a.name !== "class") mix(a.name + "=" + a.value.slice(0, 200));
      mix((el.textContent || "").slice(0, 200));
      if ("value" in el) mix(String(el.value).slice(0, 200));
      if ("checked" in el) mix(el.checked ? "c1" : "c0");
      if ("selected" in el) mix(el.selected ? "s1" : "s0");
      if ("disabled" in el) mix(el.disabled ? "d1" : "d0");
      if (el.open !== undefined) mix(el.open ? "o1" : "o0");
      mix(el.checkVisibility ? (el.checkVisibility() ? "v1" : "v0") : "v?");
    }
    for (const host of root.querySelectorAll("*")) if (host.shadowRoot) visit(host.shadowRoot);
  };
  if (document.documentElement) visit(document);
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  mix("focus:" + (active ? idOf(active) : 0));
  mix("title:" + document.title);
  const outcomes = [];
  const PRIORITY = ["alert", "alertdialog", "dialog", "status", "log"];
  const roleOf = (el) => el.getAttribute("role") || (el.tagName === "OUTPUT" ? "status" : el.tagName === "DIALOG" ? "dialog" : el.getAttribute("aria-live") === "assertive" ? "alert" : "status");
  const live = [...document.querySelectorAll('[role=alert],[role=alertdialog],[role=status],[role=log],[role=dialog],output,dialog[open],[aria-live=polite],[aria-live=assertive]')]
    .filter((el) => PRIORITY.includes(roleOf(el)) && (!el.checkVisibility || el.checkVisibility()))
    .sort((a, b) => PRIORITY.indexOf(roleOf(a)) - PRIORITY.indexOf(roleOf(b)));
  for (const el of live) {
    const text = (el.innerText || el.textContent || "").replace(/\\s+/g, " ").trim();
    if (!text) continue;
    outcomes.push({ role: roleOf(el), text: text.length > 160 ? text.slice(0, 159) + "\\u2026" : text });
    if (outcomes.length >= 5) break;
  }
  return { digest: (h >>> 0).toString(16) + ":" + count, outcomes };
})()`;

const worlds = new WeakMap<PageTarget, { loaderId?: string; contextId: number }>();

async function isolatedContext(page: PageTarget): Promise<number | undefined> {
  const cached = worlds.get(page);
  if (cached && cached.loaderId === page.loaderId) return cached.contextId;
  if (!page.mainFrameId) return undefined;
  const { executionContextId } = await page.send("Page.createIsolatedWorld", {
    frameId: page.mainFrameId,
    worldName: "krometrail-probe",
  });
  worlds.set(page, { loaderId: page.loaderId, contextId: executionContextId });
  return executionContextId;
}

export interface SemanticOutcome {
  role: string;
  text: string;
}

export interface Probe {
  digest: string;
  /** Current alerts, dialogs and status messages: post-action state, not a claim of change. */
  outcomes: SemanticOutcome[];
}

/** The fingerprint, or undefined when it cannot be read (then callers take a full snapshot). */
export async function probeTargets(page: PageTarget): Promise<Probe | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const contextId = await isolatedContext(page);
      if (contextId === undefined) return undefined;
      const r = await page.send(
        "Runtime.evaluate",
        { expression: PROBE, contextId, returnByValue: true },
        2_000,
      );
      const value = r.result.value as Probe | undefined;
      if (r.exceptionDetails || typeof value?.digest !== "string") return undefined;
      return { digest: `${page.generation}:${value.digest}`, outcomes: value.outcomes ?? [] };
    } catch {
      // The context went away with a navigation; make a new world once.
      worlds.delete(page);
    }
  }
  return undefined;
}
