import { assert, assertEquals } from "../../assert.ts";
import { formatBytes, formatSeconds, Progress, type ProgressStream } from "../../../src/cli/progress.ts";

class Sink implements ProgressStream {
  text = "";
  constructor(private readonly terminal: boolean) {}
  writeSync(bytes: Uint8Array): number {
    // Short writes: the progress line must finish what the stream did not take.
    const n = Math.min(bytes.length, 7);
    this.text += new TextDecoder().decode(bytes.subarray(0, n));
    return n;
  }
  isTerminal(): boolean {
    return this.terminal;
  }
}

Deno.test("progress: on a pipe each tick is its own line", async () => {
  const sink = new Sink(false);
  let n = 0;
  const p = new Progress(() => `frames ${++n}`, sink, { intervalMs: 60_000 });
  assertEquals(p.tty, false);
  await p.tick();
  p.log("a message");
  await p.tick();
  await p.stop();
  assertEquals(sink.text, "frames 1\na message\nframes 2\nframes 3\n");
  assert(!sink.text.includes("\r"));
  assertEquals(p.lines, 3);
});

Deno.test("progress: on a terminal the line rewrites itself and a log keeps it below", async () => {
  const sink = new Sink(true);
  let n = 0;
  const p = new Progress(() => Promise.resolve(`frames ${++n}\n(two lines)`), sink, {
    intervalMs: 60_000,
    columns: () => 0,
  });
  assertEquals(p.tty, true);
  await p.tick();
  await p.tick();
  p.log("note");
  await p.stop();
  assertEquals(
    sink.text,
    "\rframes 1 (two lines)\x1b[K\rframes 2 (two lines)\x1b[K\r\x1b[Knote\nframes 2 (two lines)" +
      "\rframes 3 (two lines)\x1b[K\n",
  );
});

Deno.test("progress: on a terminal a line wider than it is cut, so \\r can rewrite it", async () => {
  const sink = new Sink(true);
  const p = new Progress(() => "0123456789abcdef", sink, { intervalMs: 60_000, columns: () => 10 });
  await p.tick();
  await p.stop();
  assertEquals(sink.text, "\r01234567…\x1b[K\r01234567…\x1b[K\n");
  const pipe = new Sink(false);
  const q = new Progress(() => "0123456789abcdef", pipe, { intervalMs: 60_000, columns: () => 10 });
  await q.stop();
  assertEquals(pipe.text, "0123456789abcdef\n", "a pipe keeps the whole line");
});

Deno.test("progress: a slow render is never run twice at once, a failing one shows its message", async () => {
  const sink = new Sink(false);
  let running = 0;
  let most = 0;
  let calls = 0;
  const p = new Progress(
    async () => {
      running++;
      most = Math.max(most, running);
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      running--;
      if (calls === 1) throw new Error("flush failed");
      return "ok";
    },
    sink,
    { intervalMs: 60_000 },
  );
  await Promise.all([p.tick(), p.tick(), p.tick()]);
  assertEquals(most, 1);
  assertEquals(calls, 1);
  await p.stop();
  assertEquals(sink.text, "progress unavailable: flush failed\nok\n");
});

Deno.test("progress: start ticks on the interval until stop", async () => {
  const sink = new Sink(false);
  let n = 0;
  const p = new Progress(() => `tick ${++n}`, sink, { intervalMs: 10 });
  p.start();
  while (n < 3) await new Promise((r) => setTimeout(r, 5));
  await p.stop();
  const after = sink.text;
  await new Promise((r) => setTimeout(r, 30));
  assertEquals(sink.text, after, "nothing is written after stop");
  assert(after.split("\n").filter((l) => l).length >= 4);
});

Deno.test("progress: sizes and times read as a person expects", () => {
  assertEquals(formatBytes(0), "0 B");
  assertEquals(formatBytes(1023), "1023 B");
  assertEquals(formatBytes(1536), "1.5 KB");
  assertEquals(formatBytes(20 * 1024 * 1024), "20 MB");
  assertEquals(formatBytes(3 * 1024 ** 3), "3.0 GB");
  assertEquals(formatBytes(-1), "? B");
  assertEquals(formatSeconds(1234), "1.2 s");
  assertEquals(formatSeconds(-5), "0.0 s");
});
