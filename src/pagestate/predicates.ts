/**
 * The closed predicate set bisect evaluates over a reconstructed document: structured objects validated up
 * front (zod, for the tool layer), each with its own evaluator — never a string, never evaluated as code.
 * The subject is the first element the selector matches; a missing subject is `"elementMissing"`, distinct
 * from `false`. Pure.
 */
import { z } from "zod";
import type { DomNode } from "./dom_types.ts";
import { optionsOf, selfHiddenReason, textContent } from "./dom_facts.ts";
import { isChecked, isDisabled, optionValue, type ParsedSelector, querySelector } from "./selector.ts";

const attributeName = z.string().regex(
  /^[A-Za-z_:][\w:.-]{0,59}$/,
  "an attribute name such as disabled or aria-invalid",
);
const shortString = z.string().max(200);

/**
 * Traces' shapes are accepted as they are (`attribute` for the name, `equals` on exists/visible); `name` is
 * the spelling krometrail's tools use. Exactly one of the two names an attribute.
 */
const exists = z.strictObject({
  kind: z.literal("exists"),
  equals: z.boolean().optional().describe("true (default): the selector matches; false: it matches nothing"),
}).describe("the selector matches an element");
const visible = z.strictObject({
  kind: z.literal("visible"),
  equals: z.boolean().optional().describe("default true"),
}).describe(
  "the first match is visible (real layout when the replay measures it, else the markup's evidence)",
);
const textContains = z.strictObject({
  kind: z.literal("textContains"),
  text: z.string().min(1).max(200).describe("case-sensitive, whitespace collapsed"),
}).describe("the first match's text contains `text`");
const propertyEquals = z.strictObject({
  kind: z.literal("propertyEquals"),
  property: z.enum(["disabled", "checked", "readOnly", "value"]),
  equals: z.union([z.boolean(), shortString]).describe("a boolean, or a string for value"),
}).describe("a form property of the first match (disabled follows HTML, fieldsets included)");
const attributeExists = z.strictObject({
  kind: z.literal("attributeExists"),
  name: attributeName.optional(),
  attribute: attributeName.optional().describe("Traces' spelling of name"),
}).describe("the first match carries the attribute");
const attributeEquals = z.strictObject({
  kind: z.literal("attributeEquals"),
  name: attributeName.optional(),
  attribute: attributeName.optional().describe("Traces' spelling of name"),
  equals: shortString,
}).describe("the first match's attribute has exactly this value");
const optionCount = z.strictObject({
  kind: z.literal("optionCount"),
  equals: z.number().int().min(0).max(100_000),
}).describe("the first match (a select, datalist or optgroup) holds exactly this many options");

/** A rectangle of the page's viewport in CSS px (mapped onto each frame through its own device scale). */
const region = z.strictObject({
  x: z.number().min(0).max(100_000),
  y: z.number().min(0).max(100_000),
  width: z.number().min(1).max(100_000),
  height: z.number().min(1).max(100_000),
}).describe("a rectangle of the viewport in CSS px");
/** Visual kinds are evaluated over the recorded screencast frames, never over the DOM (no selector). */
const regionChanged = z.strictObject({
  kind: z.literal("regionChanged"),
  region,
  threshold: z.number().min(0).max(1).optional().describe(
    "share of the region's pixels (0–1) that must differ from the window's first frame; default 0.01",
  ),
}).describe(
  "visual: the region differs from the window's first frame (a pixel differs when a channel moved by more than 24 of 255) on more than `threshold` of its pixels",
);
const regionColor = z.strictObject({
  kind: z.literal("regionColor"),
  region,
  color: z.string().regex(/^#[0-9a-fA-F]{6}$/, "a colour as #rrggbb"),
  tolerance: z.number().min(0).max(255).optional().describe(
    "largest channel distance (0–255) of the mean colour from `color`; default 24",
  ),
}).describe("visual: the region's mean colour is within `tolerance` of `color` (max channel distance)");

export const PREDICATE_KINDS = [
  "exists",
  "visible",
  "textContains",
  "propertyEquals",
  "attributeExists",
  "attributeEquals",
  "optionCount",
  "regionChanged",
  "regionColor",
] as const;

/** The kinds evaluated over frames: DOM evaluators refuse them. */
export const VISUAL_PREDICATE_KINDS = ["regionChanged", "regionColor"] as const;

export const predicateSchema = z
  .discriminatedUnion("kind", [
    exists,
    visible,
    textContains,
    propertyEquals,
    attributeExists,
    attributeEquals,
    optionCount,
    regionChanged,
    regionColor,
  ])
  .superRefine((p, ctx) => {
    if (p.kind === "attributeExists" || p.kind === "attributeEquals") {
      if ((p.name === undefined) === (p.attribute === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: ["name"],
          message: "give the attribute as `name` (exactly one)",
        });
      }
    }
    if (p.kind === "propertyEquals") {
      const wantsString = p.property === "value";
      if (wantsString !== (typeof p.equals === "string")) {
        ctx.addIssue({
          code: "custom",
          path: ["equals"],
          message: wantsString ? "`value` compares to a string" : `\`${p.property}\` compares to a boolean`,
        });
      }
    }
  });

export type PredicateInput = z.input<typeof predicateSchema>;

/** A visual predicate as validated (defaults not yet applied: see temporal/visual_predicates.ts). */
export type VisualPredicateInput = Extract<
  z.output<typeof predicateSchema>,
  { kind: (typeof VISUAL_PREDICATE_KINDS)[number] }
>;

export function isVisualPredicate(p: { kind: string }): p is VisualPredicateInput {
  return (VISUAL_PREDICATE_KINDS as readonly string[]).includes(p.kind);
}

/** The canonical, validated DOM predicate. */
export type Predicate =
  | { kind: "exists"; equals: boolean }
  | { kind: "visible"; equals: boolean }
  | { kind: "textContains"; text: string }
  | { kind: "propertyEquals"; property: "disabled" | "checked" | "readOnly"; equals: boolean }
  | { kind: "propertyEquals"; property: "value"; equals: string }
  | { kind: "attributeExists"; name: string }
  | { kind: "attributeEquals"; name: string; equals: string }
  | { kind: "optionCount"; equals: number };

export class PredicateError extends Error {
  constructor(readonly code: "invalid_predicate" | "predicate_not_applicable", message: string) {
    super(message);
    this.name = "PredicateError";
  }
}

function attributeOf(p: { name?: string; attribute?: string }): string {
  return p.name ?? p.attribute ?? "";
}

/** Validates and canonicalizes a predicate; the message names every problem. */
export function parsePredicate(input: unknown): Predicate {
  const r = predicateSchema.safeParse(input);
  if (!r.success) {
    const issues = r.error.issues.map((i) =>
      `${i.path.length > 0 ? i.path.join(".") + ": " : ""}${i.message}`
    );
    throw new PredicateError(
      "invalid_predicate",
      `invalid predicate (${issues.join("; ")}); supported kinds: ${PREDICATE_KINDS.join(", ")}`,
    );
  }
  return canonicalPredicate(r.data);
}

/** What the schema yields, or the canonical form itself: evaluators take either. */
export type PredicateLike = Predicate | z.output<typeof predicateSchema>;

/**
 * The canonical form of an already validated predicate (no validation here). A visual kind is not a DOM
 * predicate: every DOM evaluator goes through here, so they all refuse it before touching the document.
 */
export function canonicalPredicate(p: PredicateLike): Predicate {
  switch (p.kind) {
    case "regionChanged":
    case "regionColor":
      throw new PredicateError(
        "predicate_not_applicable",
        `${p.kind} is a visual predicate, evaluated over the recorded frames, not over the DOM`,
      );
    case "exists":
    case "visible":
      return { kind: p.kind, equals: p.equals ?? true };
    case "attributeExists":
      return { kind: p.kind, name: attributeOf(p).toLowerCase() };
    case "attributeEquals":
      return { kind: p.kind, name: attributeOf(p).toLowerCase(), equals: p.equals };
    case "propertyEquals":
      return p.property === "value"
        ? { kind: p.kind, property: "value", equals: String(p.equals) }
        : { kind: p.kind, property: p.property, equals: p.equals === true };
    default:
      return p;
  }
}

/**
 * Real layout for `visible`, supplied by the replay target: true/false when it measured the node, undefined
 * when it could not (the DOM's own evidence is used then).
 */
export type LayoutOracle = (nodeId: number) => boolean | undefined;

export type PredicateValue = boolean | "elementMissing";

export interface PredicateOutcome {
  value: PredicateValue;
  /** `dom_approximation`: `visible` was judged from markup (no layout); `dom` otherwise; `layout` measured. */
  basis: "dom" | "dom_approximation" | "layout";
}

/**
 * Visibility from markup alone: hidden attribute, inline display:none / visibility:hidden, aria-hidden on
 * the node or an ancestor, content of a closed `<details>` (its summary excepted), non-rendered content
 * (head, script, template), and options of a drop-down select (drawn only in its popup). Approximate:
 * stylesheets, geometry and occlusion are not seen.
 */
export function domVisible(node: DomNode): boolean {
  if (node.kind !== "element") return false;
  if (node.tag === "option" || node.tag === "optgroup") {
    const select = node.parent?.tag === "select" ? node.parent : node.parent?.parent;
    const size = Number(select?.attrs.get("size") ?? "1");
    if (select?.tag === "select" && !select.attrs.has("multiple") && !(size > 1)) return false;
  }
  let child: DomNode | undefined;
  for (let n: DomNode | undefined = node; n && n.kind === "element"; child = n, n = n.parent) {
    if (selfHiddenReason(n) !== undefined) return false;
    if (
      n.tag === "head" || n.tag === "script" || n.tag === "style" || n.tag === "template" ||
      n.tag === "noscript"
    ) {
      return false;
    }
    if (n.tag === "details" && child !== undefined && !n.attrs.has("open")) {
      const summary = n.children.find((c) => c.kind === "element" && c.tag === "summary");
      if (child !== summary) return false;
    }
    if (n.tag === "dialog" && !n.attrs.has("open")) return false;
  }
  return true;
}

function readValue(node: DomNode): string {
  if (node.value !== undefined) return node.value;
  if (node.tag === "textarea") return node.children.map((c) => c.kind === "text" ? c.text : "").join("");
  if (node.tag === "select") {
    const options = optionsOf(node);
    const chosen = options.find((o) => o.attrs.has("selected")) ?? options[0];
    return chosen ? optionValue(chosen) : "";
  }
  return node.attrs.get("value") ?? "";
}

function isReadOnly(node: DomNode): boolean {
  return (node.tag === "input" || node.tag === "textarea") && node.attrs.has("readonly");
}

/** Evaluates `p` on `subject` (already resolved); throws PredicateError when the kind cannot apply. */
export function evaluateOn(
  subject: DomNode,
  predicate: PredicateLike,
  layout?: LayoutOracle,
): PredicateOutcome {
  const p = canonicalPredicate(predicate);
  switch (p.kind) {
    case "exists":
      return { value: p.equals, basis: "dom" };
    case "visible": {
      const measured = layout?.(subject.id);
      if (measured !== undefined) return { value: measured === p.equals, basis: "layout" };
      return { value: domVisible(subject) === p.equals, basis: "dom_approximation" };
    }
    case "textContains":
      return { value: textContent(subject).includes(p.text.replace(/\s+/g, " ").trim()), basis: "dom" };
    case "propertyEquals":
      switch (p.property) {
        case "disabled":
          return { value: isDisabled(subject) === p.equals, basis: "dom" };
        case "checked":
          return { value: isChecked(subject) === p.equals, basis: "dom" };
        case "readOnly":
          return { value: isReadOnly(subject) === p.equals, basis: "dom" };
        case "value":
          return { value: readValue(subject) === p.equals, basis: "dom" };
      }
      break;
    case "attributeExists":
      return { value: subject.attrs.has(p.name), basis: "dom" };
    case "attributeEquals":
      return { value: subject.attrs.get(p.name) === p.equals, basis: "dom" };
    case "optionCount":
      if (subject.tag !== "select" && subject.tag !== "datalist" && subject.tag !== "optgroup") {
        throw new PredicateError(
          "predicate_not_applicable",
          `optionCount applies to a select, datalist or optgroup; the selector's first match is a <${subject.tag}>`,
        );
      }
      return { value: optionsOf(subject).length === p.equals, basis: "dom" };
  }
  return { value: false, basis: "dom" };
}

/** The full outcome at one instant: the selector's first match is the subject. */
export function evaluatePredicateDetailed(
  doc: DomNode,
  selector: ParsedSelector,
  predicate: PredicateLike,
  layout?: LayoutOracle,
): PredicateOutcome {
  const p = canonicalPredicate(predicate);
  const subject = querySelector(doc, selector);
  if (!subject) {
    if (p.kind === "exists") return { value: !p.equals, basis: "dom" };
    return { value: "elementMissing", basis: p.kind === "visible" && !layout ? "dom_approximation" : "dom" };
  }
  return evaluateOn(subject, p, layout);
}

/** `exists` is never `"elementMissing"` (absence is its answer); every other kind is when nothing matches. */
export function evaluatePredicate(
  doc: DomNode,
  selector: ParsedSelector,
  p: PredicateLike,
  layout?: LayoutOracle,
): PredicateValue {
  return evaluatePredicateDetailed(doc, selector, p, layout).value;
}
