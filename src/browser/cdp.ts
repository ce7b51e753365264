import CDP from "chrome-remote-interface";
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.d.ts";
import { ToolError } from "../errors.ts";

export type Commands = ProtocolMapping.Commands;
export type Events = ProtocolMapping.Events;
export type CommandParams<M extends keyof Commands> = Commands[M]["paramsType"] extends []
  ? Record<string, never>
  : Commands[M]["paramsType"][0];
export type CommandResult<M extends keyof Commands> = Commands[M]["returnType"];
export type EventParams<E extends keyof Events> = Events[E] extends [infer P] ? P : undefined;

type Listener = (params: unknown, sessionId: string | undefined) => void;

interface RawClient {
  send(method: string, params: unknown, sessionId?: string): Promise<unknown>;
  on(event: "event", cb: (message: { method: string; params: unknown; sessionId?: string }) => void): void;
  on(event: "disconnect", cb: () => void): void;
  close(): Promise<void>;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/**
 * A typed view over one browser-level CDP websocket. Page sessions are flat (sessionId per
 * command), so one socket carries every target we attach to.
 */
export class CdpConnection {
  #client: RawClient;
  #listeners = new Map<string, Set<Listener>>();
  #disconnectHandlers = new Set<() => void>();
  #closed = false;

  private constructor(client: RawClient) {
    this.#client = client;
    client.on("event", (message) => {
      const set = this.#listeners.get(message.method);
      if (!set) return;
      for (const listener of [...set]) listener(message.params, message.sessionId);
    });
    client.on("disconnect", () => {
      this.#closed = true;
      for (const handler of this.#disconnectHandlers) handler();
    });
  }

  static async connect(webSocketUrl: string): Promise<CdpConnection> {
    const client = await CDP({ target: webSocketUrl, local: true }) as unknown as RawClient;
    return new CdpConnection(client);
  }

  get closed(): boolean {
    return this.#closed;
  }

  async send<M extends keyof Commands>(
    method: M,
    params?: CommandParams<M>,
    sessionId?: string,
    timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ): Promise<CommandResult<M>> {
    if (this.#closed) {
      throw new ToolError({
        code: "browser_disconnected",
        message: "The browser connection is closed.",
        retry: "after_recovery",
        recovery: "Call start_browser (or attach_browser) to begin a new session.",
      });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
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
    });
    try {
      return await Promise.race([
        this.#client.send(method, params ?? {}, sessionId) as Promise<CommandResult<M>>,
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
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
    this.#closed = true;
    await this.#client.close().catch(() => {});
  }
}

/** CDP errors arrive as plain Errors whose message is the protocol's; keep only that text. */
export function cdpMessage(err: unknown): string {
  if (err instanceof ToolError) return err.message;
  const text = err instanceof Error ? err.message : String(err);
  return text.slice(0, 300);
}
