/**
 * The shapes the page-state cores share: a document reconstructed from rrweb events, and those events
 * placed on the session clock. Pure: nothing here knows CDP, MCP or the store.
 */
import type { eventWithTime } from "@rrweb/types";

export type DomNodeKind = "document" | "doctype" | "element" | "text" | "cdata" | "comment";

/** One node of a reconstructed document, keyed by the rrweb id its recorder gave it. */
export interface DomNode {
  id: number;
  kind: DomNodeKind;
  /** Lower-case tag name of an element; "" for other kinds. */
  tag: string;
  /** An element's attributes as recorded (rrweb's `_cssText` and `rr_*` internals excluded). */
  attrs: Map<string, string>;
  /** Text of a text, comment or cdata node; "" otherwise. */
  text: string;
  parent: DomNode | undefined;
  children: DomNode[];
  /** Form state rrweb records as input events, not attributes (already masked by the recorder). */
  value?: string;
  checked?: boolean;
  isSvg?: boolean;
}

/** An rrweb event placed on the session clock (nanoseconds since the session began, like frames). */
export interface TimedDomEvent {
  at_ns: number;
  event: eventWithTime;
}
