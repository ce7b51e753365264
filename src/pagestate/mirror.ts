/**
 * Reconstructs a page's document from its rrweb 2.x event stream without a browser: full snapshots replace the
 * document, mutations are applied in the order rrweb's own Replayer applies them (removes, adds with the same
 * queueing of adds whose parent or next sibling comes later, texts, attributes), inputs set form state, and
 * scroll / viewport / meta events keep the page's geometry. Ids that no longer exist are counted in
 * `warnings`, never thrown. Pure: nothing here knows CDP or a DOM.
 */
import type { eventWithTime, inputData, serializedNodeWithId } from "@rrweb/types";
import { EventType, IncrementalSource } from "@rrweb/types";
import type { DomNode } from "./dom_types.ts";
import {
  change,
  isToggle,
  type MirrorChange,
  NodeStore,
  type ScrollPosition,
  type Viewport,
} from "./mirror_store.ts";
import { applyMutation } from "./mirror_mutation.ts";

export type { MirrorChange, ScrollPosition, Viewport } from "./mirror_store.ts";

export class DomMirror {
  private store = new NodeStore();
  private root: DomNode | undefined;
  private currentHref = "";
  private currentViewport: Viewport = { width: 0, height: 0 };
  /** The href of the last full snapshot's document, and whether a new document has begun loading since. */
  private snapshotHref = "";
  private loadedSinceSnapshot = false;

  /** Mutations, inputs and scrolls that referred to nodes the mirror did not have. */
  get warnings(): number {
    return this.store.warnings;
  }

  /** The root document node, undefined before the first full snapshot. */
  get document(): DomNode | undefined {
    return this.root;
  }

  get href(): string {
    return this.currentHref;
  }

  get viewport(): Viewport {
    return { ...this.currentViewport };
  }

  /** Number of nodes in the document (iframe documents included). */
  get size(): number {
    return this.store.nodes.size;
  }

  node(id: number): DomNode | undefined {
    return this.store.nodes.get(id);
  }

  /** A node's scroll offset (the document's id for the window scroll); 0,0 when never scrolled. */
  scroll(id: number): ScrollPosition {
    const s = this.store.scrolls.get(id);
    return s ? { ...s } : { x: 0, y: 0 };
  }

  apply(e: eventWithTime): MirrorChange | undefined {
    switch (e.type) {
      case EventType.Meta: {
        this.currentHref = e.data.href;
        this.currentViewport = { width: e.data.width, height: e.data.height };
        return change("meta");
      }
      case EventType.FullSnapshot:
        return this.fullSnapshot(e.data.node, e.data.initialOffset);
      case EventType.DomContentLoaded:
        // rrweb emits it for each document it records from the start: the next snapshot is a new document.
        this.loadedSinceSnapshot = true;
        return undefined;
      case EventType.IncrementalSnapshot: {
        const d = e.data;
        switch (d.source) {
          case IncrementalSource.Mutation:
            return applyMutation(this.store, d);
          case IncrementalSource.Input:
            return this.input(d);
          case IncrementalSource.Scroll: {
            const c = change("scroll");
            c.target = d.id;
            if (!this.store.nodes.has(d.id)) {
              this.store.warnings++;
              return c;
            }
            this.store.scrolls.set(d.id, { x: d.x, y: d.y });
            return c;
          }
          case IncrementalSource.ViewportResize:
            this.currentViewport = { width: d.width, height: d.height };
            return change("viewport");
          default:
            return undefined;
        }
      }
      default:
        return undefined;
    }
  }

  /** A deep copy sharing nothing mutable, so a cached mirror can be rolled forward independently. */
  clone(): DomMirror {
    const copy = new DomMirror();
    copy.currentHref = this.currentHref;
    copy.currentViewport = { ...this.currentViewport };
    copy.snapshotHref = this.snapshotHref;
    copy.loadedSinceSnapshot = this.loadedSinceSnapshot;
    const { store, root } = this.store.cloneWith(this.root);
    copy.store = store;
    copy.root = root;
    return copy;
  }

  // ---- full snapshots ----

  private fullSnapshot(sn: serializedNodeWithId, offset: { top: number; left: number }): MirrorChange {
    const c = change("snapshot");
    if (this.root) c.removed.push(this.root.id);
    // rrweb re-attaches a loaded iframe's document a task after the snapshot (onceIframeLoaded's setTimeout),
    // and mutations inside the frame may come first. A checkpoint keeps ids, so an iframe serialized again
    // under the same id keeps its document until the attach replaces it: no false "frame emptied" change.
    const frameDocs = new Map<number, DomNode>();
    const sameDocument = this.root !== undefined && !this.loadedSinceSnapshot &&
      this.currentHref === this.snapshotHref;
    for (const n of sameDocument ? this.store.nodes.values() : []) {
      if (n.tag !== "iframe") continue;
      const d = n.children.find((ch) => ch.kind === "document");
      if (d) frameDocs.set(n.id, d);
    }
    const oldScrolls = this.store.scrolls;
    this.store.nodes.clear();
    this.store.scrolls = new Map();
    this.root = this.store.build(sn, undefined, c.added);
    for (const [iframeId, d] of frameDocs) {
      const iframe = this.store.nodes.get(iframeId);
      if (!iframe || iframe.tag !== "iframe" || iframe.children.some((ch) => ch.kind === "document")) {
        continue;
      }
      d.parent = iframe;
      iframe.children.push(d);
      this.store.register(d, oldScrolls, c.added);
    }
    if (offset && (offset.top || offset.left)) {
      this.store.scrolls.set(sn.id, { x: offset.left, y: offset.top });
    }
    this.snapshotHref = this.currentHref;
    this.loadedSinceSnapshot = false;
    return c;
  }
  // ---- form state ----

  private input(d: inputData): MirrorChange | undefined {
    // rrweb records -1 for inputs on nodes it never serialized (set programmatically before serialization).
    if (d.id === -1) return undefined;
    const c = change("input");
    c.target = d.id;
    const node = this.store.nodes.get(d.id);
    if (!node) {
      this.store.warnings++;
      return c;
    }
    node.value = d.text;
    if (isToggle(node)) node.checked = d.isChecked;
    c.attributes.push(d.id);
    return c;
  }
}
