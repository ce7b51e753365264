/**
 * One progress line on a terminal stream for long CLI operations. On a TTY the line rewrites itself
 * (`\r` and erase-to-end), so a person sees it move; on a pipe or file each tick is its own line, so
 * logs and CI output stay readable.
 */

export interface ProgressStream {
  writeSync(bytes: Uint8Array): number;
  isTerminal(): boolean;
}

export interface ProgressOptions {
  /** Time between renders; default 1,000 ms on a pipe, 250 ms on a terminal. */
  intervalMs?: number;
  /** Overrides the stream's own answer (tests, NO_TTY). */
  tty?: boolean;
  /** Terminal width; a longer line would wrap and `\r` could not rewrite it. Default: the console's. */
  columns?: () => number;
}

function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 0;
  }
}

const encoder = new TextEncoder();
const ERASE_TO_END = "\x1b[K";

function writeAll(stream: ProgressStream, text: string): void {
  const bytes = encoder.encode(text);
  let off = 0;
  while (off < bytes.length) off += stream.writeSync(bytes.subarray(off));
}

/** A line rendered by `render` every interval until `stop`; a render that throws shows its message. */
export class Progress {
  readonly tty: boolean;
  readonly intervalMs: number;
  readonly #columns: () => number;
  #timer?: ReturnType<typeof setInterval>;
  #rendering?: Promise<void>;
  #lastLine = "";
  #open = false;
  #lines = 0;

  constructor(
    private readonly render: () => string | Promise<string>,
    private readonly stream: ProgressStream,
    opts: ProgressOptions = {},
  ) {
    this.tty = opts.tty ?? stream.isTerminal();
    this.intervalMs = opts.intervalMs ?? (this.tty ? 250 : 1_000);
    this.#columns = opts.columns ?? consoleColumns;
  }

  /** Lines written so far (each TTY rewrite counts). */
  get lines(): number {
    return this.#lines;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    void this.tick();
    this.#timer = setInterval(() => void this.tick(), this.intervalMs);
  }

  /** Renders now unless a render is still running (a slow render never piles up). */
  tick(): Promise<void> {
    if (this.#rendering) return this.#rendering;
    this.#rendering = (async () => {
      let line: string;
      try {
        line = await this.render();
      } catch (err) {
        line = `progress unavailable: ${(err as Error).message}`;
      }
      this.#show(line);
    })().finally(() => {
      this.#rendering = undefined;
    });
    return this.#rendering;
  }

  /** Writes a message above the progress line without losing it. */
  log(message: string): void {
    if (this.tty && this.#open) {
      writeAll(this.stream, `\r${ERASE_TO_END}${message}\n${this.#lastLine}`);
    } else {
      writeAll(this.stream, `${message}\n`);
    }
  }

  /** Stops ticking after one last render, and ends the line so later output starts on its own. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#rendering;
    await this.tick();
    if (this.tty && this.#open) writeAll(this.stream, "\n");
    this.#open = false;
  }

  #show(line: string): void {
    let one = line.replace(/[\r\n]+/g, " ");
    this.#lines++;
    if (this.tty) {
      const width = this.#columns();
      if (width > 1 && one.length > width - 1) one = `${one.slice(0, width - 2)}…`;
      this.#lastLine = one;
      writeAll(this.stream, `\r${one}${ERASE_TO_END}`);
      this.#open = true;
    } else {
      this.#lastLine = one;
      writeAll(this.stream, `${one}\n`);
    }
  }
}

/** `1.2 MB`-style sizes for progress lines and reports. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "? B";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** `12.3 s` for elapsed times. */
export function formatSeconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}
