import type { PageTarget } from "../browser/targets.ts";

/**
 * A cheap in-page reading of everything the concise target index depends on. For each element that
 * can be a target (by identity, so a replaced node reads as new) it hashes name sources, value,
 * states, visibility and focus. Comparing two readings tells whether the last snapshot still holds,
 * which few targets changed (patched from their own AX nodes), or that the tree must be read again.
 *
 * It runs in an isolated world so the page cannot see or disturb the identity maps, and it also
 * reads the current alerts and status messages for `semantic_outcomes`.
 */
const PROBE = `(() => {
  const g = globalThis;
  g.__ids ??= new WeakMap();
  g.__byId ??= new Map();
  g.__next ??= 0;
  // Every DOM change since this world was made, counted: zero new ones since a full read proves the
  // tree it read (beyond the targets' own readings below) still stands.
  g.__world ??= Math.random().toString(36).slice(2);
  g.__mutations ??= 0;
  g.__roots ??= new WeakSet();
  const watch = { subtree: true, childList: true, attributes: true, characterData: true };
  if (!g.__observer) {
    g.__observer = new MutationObserver((records) => { g.__mutations += records.length; });
    if (document.documentElement) { g.__observer.observe(document, watch); g.__roots.add(document); }
  }
  g.__mutations += g.__observer.takeRecords().length;
  const idOf = (el) => {
    let id = g.__ids.get(el);
    if (id === undefined) { id = ++g.__next; g.__ids.set(el, id); g.__byId.set(id, new WeakRef(el)); }
    return id;
  };
  const SEL = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,option,iframe,[contenteditable]:not([contenteditable=false]),[tabindex],[role=button],[role=link],[role=textbox],[role=searchbox],[role=checkbox],[role=radio],[role=combobox],[role=listbox],[role=option],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=tab],[role=switch],[role=slider],[role=spinbutton],[role=treeitem],[role=gridcell]';
  const hashOf = (s) => { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); } return (h >>> 0).toString(36); };
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  const targets = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll(SEL)) {
      const parts = [el.tagName];
      for (const a of el.attributes) if (a.name !== "style" && a.name !== "class") parts.push(a.name + "=" + a.value.slice(0, 200));
      parts.push((el.textContent || "").slice(0, 200));
      if ("value" in el) parts.push("v=" + String(el.value).slice(0, 200));
      if ("checked" in el) parts.push(el.checked ? "c1" : "c0");
      if ("indeterminate" in el) parts.push(el.indeterminate ? "i1" : "i0");
      if ("selected" in el) parts.push(el.selected ? "s1" : "s0");
      if ("disabled" in el) parts.push(el.disabled ? "d1" : "d0");
      if (el.open !== undefined) parts.push(el.open ? "o1" : "o0");
      if (el === active) parts.push("focused");
      for (const l of el.labels || []) parts.push("l=" + (l.textContent || "").slice(0, 200));
      const by = el.getAttribute("aria-labelledby") || "";
      const described = el.getAttribute("aria-describedby") || "";
      for (const ref of (by + " " + described).split(/\\s+/)) if (ref) parts.push("r=" + (document.getElementById(ref)?.textContent || "").slice(0, 200));
      for (const inner of el.querySelectorAll("[alt],[aria-label],[title]")) parts.push("n=" + (inner.getAttribute("alt") || inner.getAttribute("aria-label") || inner.getAttribute("title")));
      const visible = el.checkVisibility ? el.checkVisibility() : true;
      targets.push([idOf(el), visible ? 1 : 0, hashOf(parts.join("\\u0001"))]);
    }
    for (const host of root.querySelectorAll("*")) {
      const shadow = host.shadowRoot;
      if (!shadow) continue;
      // A shadow root first seen now was not watched before: its content counts as changed.
      if (!g.__roots.has(shadow)) { g.__roots.add(shadow); g.__observer.observe(shadow, watch); g.__mutations++; }
      visit(shadow);
    }
  };
  if (document.documentElement) visit(document);
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
  return { title: document.title, targets, outcomes, world: g.__world, mutations: g.__mutations };
})()`;

const LOOKUP = `(ids) => ids.map((id) => globalThis.__byId?.get(id)?.deref() ?? null)`;

export interface SemanticOutcome {
  role: string;
  text: string;
}

/** [identity, visible (1/0), hash] per possible target, in document order. */
export type ProbeEntry = [number, number, string];

export interface Probe {
  generation: number;
  title: string;
  targets: ProbeEntry[];
  /** Current alerts, dialogs and status messages: post-action state, not a claim of change. */
  outcomes: SemanticOutcome[];
  /** The probe's world and the DOM changes it has counted there (see PROBE). */
  mutations?: { world: string; count: number };
}

export type ProbeComparison =
  | { kind: "same" }
  | { kind: "changed"; ids: number[] }
  | { kind: "restructured" };

/** Most changed targets worth patching one by one before a full read is cheaper. */
export const PATCH_LIMIT = 16;

/** Pure: how a new reading relates to the one taken with the last snapshot. */
export function compareProbes(before: Probe, after: Probe): ProbeComparison {
  if (before.generation !== after.generation || before.title !== after.title) return { kind: "restructured" };
  if (before.targets.length !== after.targets.length) return { kind: "restructured" };
  const ids: number[] = [];
  for (let i = 0; i < after.targets.length; i++) {
    const [id, visible, hash] = after.targets[i];
    const [oldId, oldVisible, oldHash] = before.targets[i];
    if (id !== oldId || visible !== oldVisible) return { kind: "restructured" };
    if (hash !== oldHash) ids.push(id);
  }
  if (ids.length === 0) return { kind: "same" };
  return ids.length <= PATCH_LIMIT ? { kind: "changed", ids } : { kind: "restructured" };
}

/** The DOM change count a snapshot's tree was read at (the probe taken just before that read). */
export interface ReadMark {
  world: string;
  count: number;
  generation: number;
}

/**
 * Pure: whether a snapshot read at `readAt` (and agreeing with `lastProbe` on every target) is provably
 * the page's tree now. The document must be the same, the probe's world must have counted no DOM change
 * since the read (attributes, text, children, in the document and every open shadow root), and every
 * target must read the same: values, checkedness, focus and visibility change without a DOM mutation.
 */
export function provesUnchanged(
  readAt: ReadMark | undefined,
  lastProbe: Probe | undefined,
  now: Probe,
): boolean {
  if (!readAt || !lastProbe || !now.mutations) return false;
  return readAt.generation === now.generation && lastProbe.generation === now.generation &&
    readAt.world === now.mutations.world && readAt.count === now.mutations.count &&
    compareProbes(lastProbe, now).kind === "same";
}

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

/** The reading, or undefined when it cannot be taken (then callers read the whole tree). */
export async function probeTargets(page: PageTarget): Promise<Probe | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const generation = page.generation;
      const contextId = await isolatedContext(page);
      if (contextId === undefined) return undefined;
      const r = await page.send(
        "Runtime.evaluate",
        { expression: PROBE, contextId, returnByValue: true },
        2_000,
      );
      const value = r.result.value as
        | (Omit<Probe, "generation" | "mutations"> & { world?: string; mutations?: number })
        | undefined;
      if (r.exceptionDetails || !Array.isArray(value?.targets)) return undefined;
      return {
        generation,
        title: value.title,
        targets: value.targets,
        outcomes: value.outcomes ?? [],
        ...(typeof value.world === "string" && typeof value.mutations === "number"
          ? { mutations: { world: value.world, count: value.mutations } }
          : {}),
      };
    } catch {
      // The context went away with a navigation; make a new world once.
      worlds.delete(page);
    }
  }
  return undefined;
}

/** Backend node ids of probed elements, in the order asked; undefined where one is gone. */
export async function backendIdsOf(page: PageTarget, ids: number[]): Promise<Array<number | undefined>> {
  const contextId = await isolatedContext(page);
  if (contextId === undefined) return ids.map(() => undefined);
  const r = await page.send("Runtime.evaluate", {
    expression: `(${LOOKUP})(${JSON.stringify(ids)})`,
    contextId,
  });
  if (!r.result.objectId) return ids.map(() => undefined);
  const { result: props } = await page.send("Runtime.getProperties", {
    objectId: r.result.objectId,
    ownProperties: true,
  });
  const out: Array<number | undefined> = ids.map(() => undefined);
  await Promise.all(props.map(async (p) => {
    const index = Number(p.name);
    if (!Number.isInteger(index) || !p.value?.objectId) return;
    const { node } = await page.send("DOM.describeNode", { objectId: p.value.objectId });
    out[index] = node.backendNodeId;
  }));
  await page.send("Runtime.releaseObject", { objectId: r.result.objectId }).catch(() => {});
  return out;
}
