/** SubjectTracker: the incremental first match always equals a fresh querySelector over the document. */
import { assert, assertEquals } from "../../assert.ts";
import type { eventWithTime, serializedNodeWithId } from "@rrweb/types";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { parseSelector, querySelector } from "../../../src/pagestate/selector.ts";
import { precedes, SubjectTracker } from "../../../src/pagestate/subject.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import { addsFor, Rec } from "./rrweb_events.ts";

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function elements(root: DomNode): DomNode[] {
  const out: DomNode[] = [];
  const walk = (n: DomNode): void => {
    if (n.kind === "element") out.push(n);
    for (const c of n.children) if (c.kind !== "document") walk(c);
  };
  walk(root);
  return out;
}

/** Random mutation batches over a live mirror: adds (with subtrees), removes, attribute flips, inputs. */
function randomStream(seed: number, steps: number): eventWithTime[] {
  const random = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const r = new Rec();
  const tags = ["div", "span", "button", "li", "input"];
  const classes = ["a", "b", "active", "a active", ""];
  const node = (depth: number): serializedNodeWithId => {
    const kids = depth > 0 && random() < 0.5 ? [node(depth - 1)] : [];
    const attrs: Record<string, string> = { class: pick(classes) };
    if (random() < 0.2) attrs.id = "target";
    const tag = pick(tags);
    if (tag === "input") attrs.type = "checkbox";
    return r.el(tag, attrs, ...(tag === "input" ? [] : kids));
  };
  const page = r.page(r.el("main", {}, node(2), node(2), node(2)));
  const events: eventWithTime[] = [r.full(page)];
  const gen = new DomMirror();
  gen.apply(events[0]);
  for (let i = 0; i < steps; i++) {
    const doc = gen.document;
    if (!doc) break;
    const els = elements(doc).filter((e) => e.tag !== "html" && e.tag !== "head");
    const inBody = els.filter((e) => e.tag !== "body" && e.tag !== "main");
    const roll = random();
    let e: eventWithTime;
    if (roll < 0.3 || inBody.length < 3) {
      const parent = pick(els.filter((x) => x.tag !== "input" && x.tag !== "body"));
      const next = parent.children.length > 0 && random() < 0.5 ? pick(parent.children).id : null;
      e = r.mutation({ adds: addsFor(parent.id, node(1), next) });
    } else if (roll < 0.5) {
      const victim = pick(inBody);
      e = r.mutation({ removes: [{ parentId: victim.parent?.id ?? 0, id: victim.id }] });
    } else if (roll < 0.85) {
      const target = pick(inBody);
      const name = pick(["class", "class", "id", "disabled", "data-x"]);
      const value = name === "class"
        ? pick(classes)
        : name === "id"
        ? pick(["target", "other"])
        : random() < 0.5
        ? ""
        : null;
      e = r.mutation({ attributes: [{ id: target.id, attributes: { [name]: value } }] });
    } else {
      const boxes = inBody.filter((x) => x.tag === "input");
      if (boxes.length === 0) continue;
      e = r.input(pick(boxes).id, "on", random() < 0.5);
    }
    gen.apply(e);
    events.push(e);
  }
  return events;
}

const SELECTORS = [
  "button.active",
  "div.a button",
  "main > div span.b",
  "li:not(.a)",
  "#target",
  "div.active > *",
  "input:checked",
  "span + button", // sibling-dependent: always walks the document
  "li:first-child",
  "button:disabled",
  "div:has(> span.active)",
  "div.a, span.b",
];

Deno.test("SubjectTracker: after every event the subject is the document's first match (random streams)", () => {
  let incremental = 0;
  let full = 0;
  let flips = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const events = randomStream(seed, 300);
    for (const text of SELECTORS) {
      const sel = parseSelector(text);
      const mirror = new DomMirror();
      const tracker = new SubjectTracker(mirror, sel);
      mirror.apply(events[0]);
      tracker.resolve();
      for (let i = 1; i < events.length; i++) {
        const previous = tracker.subject;
        const c = mirror.apply(events[i]);
        if (tracker.note(c, events[i])) tracker.update();
        const doc = mirror.document;
        assert(doc);
        const truth = querySelector(doc, sel);
        if (truth !== previous) flips++;
        if (tracker.subject !== truth) {
          throw new Error(
            `seed ${seed}, ${text}, event ${i}: tracker ${tracker.subject?.id} vs document ${truth?.id}`,
          );
        }
      }
      incremental += tracker.incrementalQueries;
      full += tracker.fullQueries;
    }
  }
  console.error(
    `random streams: ${flips} subject changes, ${incremental} incremental updates, ${full} walks`,
  );
  assert(flips > 500, `the streams move the first match around (${flips})`);
  assert(incremental > full, "most updates stay incremental");
});

Deno.test("precedes: document order, ancestors first", () => {
  const r = new Rec();
  const a = r.el("span", { id: "a" });
  const b = r.el("span", { id: "b" });
  const m = new DomMirror();
  m.apply(r.full(r.page(r.el("div", { id: "p" }, a, b))));
  const na = m.node(a.id);
  const nb = m.node(b.id);
  const parent = na?.parent;
  assert(na && nb && parent);
  assertEquals([
    precedes(na, nb),
    precedes(nb, na),
    precedes(parent, na),
    precedes(na, parent),
    precedes(na, na),
  ], [
    true,
    false,
    true,
    false,
    false,
  ]);
});
