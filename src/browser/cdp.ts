import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.d.ts";
import { ToolError } from "../errors.ts";
import { LoopbackWebSocket } from "./websocket.ts";
import { currentCallSignal, outsideCall } from "./call_signal.ts";

export type Commands = ProtocolMapping.Commands;
export type Events = ProtocolMapping.Events;
export type CommandParams<M extends keyof Commands> = Commands[M]["paramsType"] extends []
  ? Record<string, never>
  : Commands[M]["paramsType"][0];
export type CommandResult<M extends keyof Commands> = Commands[M]["returnType"];
export type EventParams<E extends keyof Events> = Events[E] extends [infer P] ? P : undefined;

type Listener = (params: unknown, sessionId: string | undefined) => void;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  method: string;
}

interface Message {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: string };
  sessionId?: string;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;

/** Why a command of a cancelled call was dropped: the canceller's own reason when it gave one. */
function cancelledBy(signal: AbortSignal, method: string): ToolError {
  if (signal.reason instanceof ToolError) return signal.reason;
  return new ToolError({
    code: "call_cancelled",
    message: `${method} was not awaited: the tool call it belonged to was cancelled.`,
    retry: "safe",
    details: { method },
  });
}

function disconnected(): ToolError {
  return new ToolError({
    code: "browser_disconnected",
    message: "The browser connection is closed.",
    retry: "after_recovery",
    recovery: "Call start_browser (or attach_browser) to begin a new session.",
  });
}

/**
 * One browser-level CDP websocket; page sessions are flat (a sessionId per command), so it carries
 * every target we attach to. A reply's callback is registered before the command is sent, so a fast
 * reply can never arrive to nobody (chrome-remote-interface 0.34 registers it after the send
 * completes, and under Deno about a fifth of fast replies were lost). The socket is our own
 * (websocket.ts): Deno's WebSocket cost 44 ms per command of 1 KB or more.
 */
export class CdpConnection {
  #socket: LoopbackWebSocket;
  #nextId = 0;
  #pending = new Map<number, Pending>();
  #listeners = new Map<string, Set<Listener>>();
  #disconnectHandlers = new Set<() => void>();
  #closed = false;

  private constructor(socket: LoopbackWebSocket) {
    this.#socket = socket;
    this.#bind(socket);
  }

  #bind(socket: LoopbackWebSocket): void {
    // The socket's callbacks inherit the context of the call that opened it; events and replies
    // belong to no call, so nothing they start is cancelled with that call.
    socket.onmessage = (text) => outsideCall(() => socket === this.#socket && this.#onMessage(text));
    socket.onclose = () => outsideCall(() => socket === this.#socket && this.#onClose());
  }

  /**
   * Opens a new socket under this same connection after the old one dropped (a reconnecting attached
   * session): every listener and disconnect handler subscribed so far stays subscribed, so the modules
   * that hold this connection carry on without re-wiring. Command ids keep counting. A socket that opens
   * after `abandoned` fired (the reconnect window closed on this attempt) is closed again at once, so the
   * connection stays closed.
   */
  async reopen(webSocketUrl: string, abandoned?: AbortSignal): Promise<void> {
    if (!this.#closed) throw new Error("reopen: the connection is still open");
    const socket = await LoopbackWebSocket.connect(webSocketUrl, CONNECT_TIMEOUT_MS);
    if (abandoned?.aborted || !this.#closed) {
      await socket.close(1_000).catch(() => {});
      throw new Error(abandoned?.aborted ? "reopen: abandoned" : "reopen: another socket opened first");
    }
    this.#socket = socket;
    this.#bind(socket);
    this.#closed = false;
  }

  static async connect(webSocketUrl: string): Promise<CdpConnection> {
    try {
      return new CdpConnection(await LoopbackWebSocket.connect(webSocketUrl, CONNECT_TIMEOUT_MS));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        /in time/.test(why)
          ? "CDP websocket did not open in time"
          : `CDP websocket refused the connection (${why})`,
      );
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  #onMessage(data: string): void {
    let message: Message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.id !== undefined) {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new Error(`${pending.method}: ${message.error.message}`));
      else pending.resolve(message.result ?? {});
      return;
    }
    if (!message.method) return;
    const set = this.#listeners.get(message.method);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(message.params, message.sessionId);
      } catch {
        // One failing listener must not starve the others of events.
      }
    }
  }

  #onClose(): void {
    if (this.#closed && this.#pending.size === 0) return;
    this.#closed = true;
    for (const pending of this.#pending.values()) pending.reject(disconnected());
    this.#pending.clear();
    for (const handler of this.#disconnectHandlers) handler();
  }

  /**
   * Sends one command. Inside a tool call (call_signal.ts) the call's cancellation rejects the
   * command at once and stops waiting for its reply, so a call past its deadline does not go on
   * through a chain of per-command timeouts, nor act on the page later.
   */
  send<M extends keyof Commands>(
    method: M,
    params?: CommandParams<M>,
    sessionId?: string,
    timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ): Promise<CommandResult<M>> {
    const signal = currentCallSignal();
    if (signal?.aborted) return Promise.reject(cancelledBy(signal, method));
    if (this.#closed || !this.#socket.open) return Promise.reject(disconnected());
    const id = ++this.#nextId;
    return new Promise<CommandResult<M>>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        settle();
        reject(
          new ToolError({
            code: "cdp_timeout",
            message: `The browser did not answer ${method} within ${timeoutMs} ms.`,
            retry: "after_recovery",
            recovery:
              "Check browser_status for an open dialog or a hung page; handle the dialog or reload the page.",
            details: { method, timeout_ms: timeoutMs },
          }),
        );
      }, timeoutMs);
      const onAbort = () => {
        this.#pending.delete(id);
        settle();
        if (signal) reject(cancelledBy(signal, method));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, {
        method,
        resolve: (value) => {
          settle();
          resolve(value as CommandResult<M>);
        },
        reject: (err) => {
          settle();
          reject(err);
        },
      });
      try {
        this.#socket.send(
          JSON.stringify({ id, method, params: params ?? {}, ...(sessionId ? { sessionId } : {}) }),
        );
      } catch {
        this.#pending.get(id)?.reject(disconnected());
        this.#pending.delete(id);
      }
    });
  }

  on<E extends keyof Events>(
    event: E,
    listener: (params: EventParams<E>, sessionId?: string) => void,
  ): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    const wrapped = listener as Listener;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  onDisconnect(handler: () => void): void {
    this.#disconnectHandlers.add(handler);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#socket.close(1_000);
    this.#onClose();
  }
}

/** CDP errors arrive as plain Errors whose message is the protocol's; keep only that text. */
export function cdpMessage(err: unknown): string {
  if (err instanceof ToolError) return err.message;
  const text = err instanceof Error ? err.message : String(err);
  return text.slice(0, 300);
}
