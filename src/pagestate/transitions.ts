/**
 * Every flip of a predicate over a window, exact to the DOM event that caused it. Where Traces bisects the
 * replay timeline (±250 ms, one transition under an assumed monotonic predicate), this walks the mutation
 * stream once from the checkpoint before the window: the predicate is evaluated after each group of events
 * sharing one instant that could change its outcome, so each transition carries the time of its event.
 * Pure: the mirror is rolled forward in place (pass a clone to keep a cached one).
 */
import type { DomNode, TimedDomEvent } from "./dom_types.ts";
import type { DomMirror, MirrorChange } from "./mirror.ts";
import {
  canonicalPredicate,
  evaluateOn,
  type LayoutOracle,
  type Predicate,
  type PredicateLike,
  type PredicateOutcome,
  type PredicateValue,
} from "./predicates.ts";
import type { ParsedSelector } from "./selector.ts";
import { SubjectTracker } from "./subject.ts";

export interface Transition {
  at_ns: number;
  from: PredicateValue;
  to: PredicateValue;
}

export interface TransitionScan {
  /** The value at `fromNs` (after every event at or before it). */
  initial: PredicateValue;
  /** Every flip in (fromNs, toNs], at the instant of the event group that caused it. */
  transitions: Transition[];
  /** The value at `toNs`. */
  final: PredicateValue;
  /** Predicate evaluations made (the initial one included). */
  probes: number;
  /** Times the subject was resolved again (an event could have changed which element is the first match). */
  queries: number;
  /** Of those, walks of the whole document (the rest re-checked only what the events touched). */
  full_queries: number;
  /** Events applied to the mirror, from its checkpoint through `toNs`. */
  events_scanned: number;
  /** Event groups in the window skipped because nothing they touched could change the outcome. */
  groups_skipped: number;
  /** `dom_approximation` when `visible` was judged from markup at any probe. */
  basis: PredicateOutcome["basis"];
}

export interface ScanOptions {
  /** Real layout for `visible` (a replay target); without one visibility is approximated from markup. */
  layout?: LayoutOracle;
  /** Resolve the selector over the whole document after every relevant group (a reference for tests). */
  exhaustive?: boolean;
}

/** Whether an event's effect on the mirror could change the predicate's outcome. */
function couldChange(c: MirrorChange | undefined, p: Predicate, layout: boolean): boolean {
  if (!c) return false;
  switch (c.kind) {
    case "snapshot":
      return true;
    case "mutation":
      if (c.added.length > 0 || c.removed.length > 0 || c.attributes.length > 0) return true;
      // Text alone cannot change which element matches; only text-reading predicates see it.
      return c.texts.length > 0 &&
        (p.kind === "textContains" || (p.kind === "propertyEquals" && p.property === "value"));
    case "input":
      return c.attributes.length > 0;
    case "viewport":
    case "scroll":
      return layout && p.kind === "visible"; // measured visibility can follow geometry
    case "meta":
      return false;
  }
}

/** One evaluation the scan needs: the subject (first match) at an instant. */
export interface ProbeRequest {
  at_ns: number;
  subject: DomNode | undefined;
}

/**
 * The scan itself, as a generator that yields each probe it needs and takes back the outcome, so one walk
 * serves a synchronous evaluation and one that awaits a replay target's layout.
 */
function* scanSteps(
  mirror: DomMirror,
  events: readonly TimedDomEvent[],
  fromNs: number,
  toNs: number,
  selector: ParsedSelector,
  p: Predicate,
  measured: boolean,
  exhaustive: boolean,
): Generator<ProbeRequest, TransitionScan, PredicateOutcome> {
  const tracker = new SubjectTracker(mirror, selector);
  let basis: PredicateOutcome["basis"] = "dom";
  const note = (o: PredicateOutcome): PredicateValue => {
    if (o.basis === "dom_approximation" || (o.basis === "layout" && basis === "dom")) basis = o.basis;
    return o.value;
  };

  let i = 0;
  let scanned = 0;
  while (i < events.length && events[i].at_ns <= fromNs) {
    mirror.apply(events[i].event);
    scanned++;
    i++;
  }
  tracker.resolve();
  const initial = note(yield { at_ns: fromNs, subject: tracker.subject });
  let probes = 1;
  let current = initial;
  let skipped = 0;
  const transitions: Transition[] = [];
  while (i < events.length && events[i].at_ns <= toNs) {
    const at = events[i].at_ns;
    let relevant = false;
    let requery = false;
    while (i < events.length && events[i].at_ns === at) {
      const e = events[i].event;
      const c = mirror.apply(e);
      if (couldChange(c, p, measured)) relevant = true;
      if (tracker.note(c, e)) requery = true;
      scanned++;
      i++;
    }
    if (!relevant && !requery) {
      skipped++;
      continue;
    }
    if (requery) {
      if (exhaustive) tracker.resolve();
      else tracker.update();
    }
    const next = note(yield { at_ns: at, subject: tracker.subject });
    probes++;
    if (next !== current) {
      transitions.push({ at_ns: at, from: current, to: next });
      current = next;
    }
  }
  return {
    initial,
    transitions,
    final: current,
    probes,
    queries: tracker.fullQueries + tracker.incrementalQueries,
    full_queries: tracker.fullQueries,
    events_scanned: scanned,
    groups_skipped: skipped,
    basis,
  };
}

function missing(p: Predicate): PredicateOutcome {
  return { value: p.kind === "exists" ? !p.equals : "elementMissing", basis: "dom" };
}

/**
 * Scans `events` (sorted by at_ns, starting at the mirror's checkpoint) through `toNs`. The mirror must be
 * positioned at the last checkpoint at or before `fromNs`; events at or before `fromNs` only position it.
 * Throws PredicateError when the predicate cannot apply to the subject (optionCount on a div).
 */
export function scanTransitions(
  mirror: DomMirror,
  events: readonly TimedDomEvent[],
  fromNs: number,
  toNs: number,
  selector: ParsedSelector,
  predicate: PredicateLike,
  opts: ScanOptions = {},
): TransitionScan {
  const p = canonicalPredicate(predicate);
  const steps = scanSteps(
    mirror,
    events,
    fromNs,
    toNs,
    selector,
    p,
    opts.layout !== undefined,
    opts.exhaustive === true,
  );
  let step = steps.next();
  while (!step.done) {
    const subject = step.value.subject;
    step = steps.next(subject ? evaluateOn(subject, p, opts.layout) : missing(p));
  }
  return step.value;
}

/** Real layout at an instant, from a replay target: true/false when measured, undefined when it could not. */
export type AsyncLayoutOracle = (nodeId: number, atNs: number) => Promise<boolean | undefined>;

/**
 * `scanTransitions` for `visible` measured by a replay target: each probe of a visible predicate awaits the
 * oracle at that instant (other kinds never wait). Scroll and viewport changes are probed too, since layout
 * can follow them.
 */
export async function scanTransitionsAsync(
  mirror: DomMirror,
  events: readonly TimedDomEvent[],
  fromNs: number,
  toNs: number,
  selector: ParsedSelector,
  predicate: PredicateLike,
  layoutAt: AsyncLayoutOracle,
): Promise<TransitionScan> {
  const p = canonicalPredicate(predicate);
  const steps = scanSteps(mirror, events, fromNs, toNs, selector, p, p.kind === "visible", false);
  let step = steps.next();
  while (!step.done) {
    const { subject, at_ns } = step.value;
    let outcome: PredicateOutcome;
    if (!subject) outcome = missing(p);
    else if (p.kind === "visible") {
      const seen = await layoutAt(subject.id, at_ns);
      outcome = seen !== undefined ? { value: seen === p.equals, basis: "layout" } : evaluateOn(subject, p);
    } else outcome = evaluateOn(subject, p);
    step = steps.next(outcome);
  }
  return step.value;
}
