/**
 * Page-side entry of the DOM recorder, bundled with rrweb's `record` by `deno task build:bundles` into
 * src/pagestate/bundles_generated.ts. krometrail runs it in an isolated world of every document (see
 * src/pagestate/recorder.ts) and calls `start`, so page scripts can neither see it, patch its
 * MutationObserver, read its buffer nor call its binding. `record` stays exposed so a fixture script can
 * run plain rrweb in a page's main world, the way an app records itself.
 */
import { record } from "rrweb";
import { EventType, type eventWithTime, IncrementalSource } from "@rrweb/types";

export interface RecorderStartOptions {
  /** The CDP binding (Runtime.addBinding) batches are sent through, one JSON array per call. */
  binding: string;
  /** A batch leaves at most this long after its first event (a full snapshot leaves at once). */
  flush_ms: number;
  /** A full snapshot (checkpoint) at most this often while the page changes. */
  checkout_ms: number;
}

type Send = (payload: string) => void;

/** Incremental sources that change what a checkpoint would hold (pointer moves and scrolls do not). */
const CHANGES_DOCUMENT = new Set<number>([
  IncrementalSource.Mutation,
  IncrementalSource.Input,
  IncrementalSource.StyleSheetRule,
  IncrementalSource.StyleDeclaration,
  IncrementalSource.AdoptedStyleSheet,
]);
/** The recording running in this world: the binding it sends through, and how to end it. */
interface Running {
  send: unknown;
  stop(): void;
}
type Scope = typeof globalThis & { __krometrailDomRecording?: Running } & Record<string, unknown>;

/**
 * rrweb 2.2.2 tests Element's `querySelector`/`querySelectorAll` as accessors, so Element always looks
 * patched and rrweb appends a hidden iframe to the page's body to borrow clean prototypes: a mutation page
 * scripts observe (and, where every frame runs the recorder, a recursion). In this world nothing is
 * patched; making those two getters that return the native methods (a bound native function reads as
 * native) lets rrweb's probe see that, and changes nothing for the page, whose world is separate.
 */
function passUntaintedProbe(): void {
  const proto =
    (globalThis as unknown as { Element: { prototype: Record<string, unknown> } }).Element.prototype;
  for (const name of ["querySelector", "querySelectorAll"]) {
    const method = proto[name];
    if (typeof method !== "function") continue;
    Object.defineProperty(proto, name, {
      get: Reflect.get.bind(null, { [name]: method }, name),
      configurable: true,
      enumerable: true,
    });
  }
}

/**
 * An isolated world has no custom element registry (`customElements` is null there), and rrweb's
 * serializer asks it about every element inside a try/catch: a TypeError thrown per element made a full
 * snapshot of the 300-row table fixture take ~2 s instead of ~0.3 s. An empty registry answers the same
 * (nothing is flagged as a custom element, as a throw left it) without the throw.
 */
function emptyCustomElements(scope: Scope): void {
  if (scope.customElements != null) return;
  Object.defineProperty(scope, "customElements", { value: { get: () => undefined }, configurable: true });
}

/**
 * rrweb warns on the console (a node it could not serialize, a cross-origin frame); this world's console
 * is its own, so silencing it keeps the recorder's words out of the page's recorded console events.
 */
function quietConsole(scope: Scope): void {
  const c = scope.console as unknown as Record<string, unknown>;
  for (const k of ["log", "info", "warn", "error", "debug"]) c[k] = () => {};
}

/**
 * rrweb stamps a mutation when it has serialized it, which a cold code path (a document's first
 * mutation) delays by several ms. An observer created before rrweb's runs first in the same delivery and
 * notes when the DOM changed; the stamp holds until the task ends, so it never reaches a later change.
 */
function changeClock(): { at(): number | undefined; stop(): void } {
  let at: number | undefined;
  const MO = (globalThis as unknown as {
    MutationObserver: new (cb: () => void) => {
      observe(target: unknown, options: Record<string, boolean>): void;
      disconnect(): void;
    };
  }).MutationObserver;
  const doc = (globalThis as unknown as { document: unknown }).document;
  const observer = new MO(() => {
    if (at === undefined) setTimeout(() => at = undefined, 0);
    at = Date.now();
  });
  observer.observe(doc, { childList: true, subtree: true, attributes: true, characterData: true });
  return { at: () => at, stop: () => observer.disconnect() };
}

/**
 * The form controls' state as one string (values' hashes, checked, selected index), compared in the page
 * and never sent: it only tells that a checkpoint is worth taking. Bounded to the first 500 controls.
 */
function hash(text: string): number {
  let h = 5381;
  for (let i = 0; i < Math.min(text.length, 256); i++) h = (h * 33 + text.charCodeAt(i)) | 0;
  return h + text.length;
}

function formFingerprint(): string {
  const doc = (globalThis as unknown as {
    document: { querySelectorAll(s: string): ArrayLike<Record<string, unknown>> };
  }).document;
  const controls = doc.querySelectorAll("input, select, textarea");
  const parts: string[] = [];
  for (let i = 0; i < Math.min(controls.length, 500); i++) {
    const c = controls[i];
    parts.push(`${hash(String(c.value ?? ""))}${c.checked ? "c" : ""}${c.selectedIndex ?? ""}`);
  }
  return parts.join(",");
}

/** Starts recording this document unless it is not a recordable top-level document. */
function start(opts: RecorderStartOptions): boolean {
  const scope = globalThis as Scope;
  const running = scope.__krometrailDomRecording;
  // Chrome may run the script twice in one document (an initialization round sent again). A new CDP
  // session (same-target reattachment) reuses this world with a new binding: record afresh through it.
  if (running && running.send === scope[opts.binding]) return false;
  // The top document's recorder records its same-origin frames; a cross-origin frame is not reachable.
  if ((scope as unknown as { top: unknown }).top !== scope) return false;
  if (location.protocol === "about:") return false;
  const send = scope[opts.binding];
  if (typeof send !== "function") return false;
  running?.stop();
  if (!running) {
    passUntaintedProbe();
    emptyCustomElements(scope);
    quietConsole(scope);
  }
  const deliver = send as Send;
  let buffer: eventWithTime[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Set once record() returns; a flush can only run after that.
  const recording: { stop?: () => void } = {};
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    try {
      deliver(JSON.stringify(batch));
    } catch {
      // The binding is gone (its CDP session detached): nobody receives this document any more.
      end();
    }
  };
  const changed = changeClock();
  function end(): void {
    clearInterval(checkpoints);
    recording.stop?.();
    changed.stop();
    removeEventListener("pagehide", flush, true);
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  }
  let last = 0;
  // Checkpoints are taken when the page is idle, not by rrweb's checkoutEveryNms, which snapshots on the
  // first event past the interval: on an idle page that event is the user's click, so the whole document
  // was serialized inside the click's dispatch (measured: click round trips +11–16% on heavy.html).
  let lastCheckpoint = Date.now();
  let changedSince = false;
  const idle = (globalThis as unknown as {
    requestIdleCallback?: (cb: () => void, opts: { timeout: number }) => number;
  }).requestIdleCallback;
  let checkpointDue = false;
  // Form state a page script sets (`.value =`, `.checked =`) goes through the page world's setters, which
  // rrweb's hooks in this world never see; a cheap comparison of form state each tick notices it, so the
  // next checkpoint records it instead of it waiting for an unrelated change.
  let formState = formFingerprint();
  const checkpoints = setInterval(() => {
    const now = formFingerprint();
    if (now !== formState) {
      formState = now;
      changedSince = true;
    }
    if (checkpointDue || !changedSince || Date.now() - lastCheckpoint < opts.checkout_ms) return;
    checkpointDue = true;
    const take = () => {
      checkpointDue = false;
      if (recording.stop) record.takeFullSnapshot(true);
    };
    // A page that is never idle still gets its checkpoint within a second.
    if (idle) idle(take, { timeout: 1_000 });
    else setTimeout(take, 0);
  }, Math.max(250, Math.round(opts.checkout_ms / 5)));
  recording.stop = record({
    emit(event) {
      if (event.type === EventType.FullSnapshot) {
        lastCheckpoint = Date.now();
        changedSince = false;
      } else if (event.type === EventType.IncrementalSnapshot && CHANGES_DOCUMENT.has(event.data.source)) {
        changedSince = true;
      }
      const at = changed.at();
      if (
        at !== undefined && event.type === EventType.IncrementalSnapshot &&
        event.data.source === IncrementalSource.Mutation
      ) {
        event.timestamp = Math.max(last, at);
      }
      last = event.timestamp;
      buffer.push(event);
      if (event.type === EventType.FullSnapshot) flush();
      else if (timer === undefined) timer = setTimeout(flush, opts.flush_ms);
    },
    // Every input value is masked in the page; password values are among them, whatever the type says.
    maskAllInputs: true,
    inlineStylesheet: true,
    recordAfter: "DOMContentLoaded",
    sampling: { mousemove: 50, scroll: 100, media: 800 },
    recordCanvas: false,
    collectFonts: false,
    inlineImages: false,
    // A recorder failure stays in the recorder (handled), not an exception event of the page.
    errorHandler: () => true,
    slimDOMOptions: {
      script: true,
      comment: true,
      headFavicon: true,
      headWhitespace: true,
      headMetaSocial: true,
      headMetaRobots: true,
      headMetaHttpEquiv: true,
      headMetaVerification: true,
    },
  });
  addEventListener("pagehide", flush, true);
  scope.__krometrailDomRecording = { send, stop: end };
  return true;
}

(globalThis as unknown as { __krometrailRrweb: { record: typeof record; start: typeof start } })
  .__krometrailRrweb = { record, start };
