/**
 * Nothing from a model is ever executed: no `eval`, no `new Function` (nor a bare `Function(...)` call, the
 * same thing) anywhere under src/, generated bundles included. A grep, so it cannot regress quietly.
 */
import { assert, assertEquals } from "../../assert.ts";
import { join } from "node:path";

const SRC = new URL("../../../src/", import.meta.url).pathname;
const FORBIDDEN: Array<[string, RegExp]> = [
  ["eval(", /(?<![\w$])eval\s*\(/],
  ["new Function", /\bnew\s+Function\b/],
  ["Function(", /(?<![\w$.])Function\s*\(/],
];

async function* files(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* files(path);
    else if (e.isFile) yield path;
  }
}

/** Offending lines of `text`, as `line: excerpt`. */
function offences(text: string): string[] {
  const out: string[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    for (const [name, re] of FORBIDDEN) {
      const m = re.exec(lines[i]);
      if (m) {
        out.push(`${i + 1}: ${name} in ${lines[i].slice(Math.max(0, m.index - 30), m.index + 40).trim()}`);
      }
    }
  }
  return out;
}

Deno.test("no eval and no new Function anywhere under src/", async () => {
  const found: string[] = [];
  let scanned = 0;
  for await (const path of files(SRC)) {
    scanned++;
    for (const o of offences(await Deno.readTextFile(path))) found.push(`${path.slice(SRC.length)}:${o}`);
  }
  assert(scanned > 100, `scanned ${scanned} files under ${SRC}`);
  assertEquals(found, [], `forbidden dynamic code:\n${found.join("\n")}`);
});

Deno.test("the grep catches what it must and spares lookalikes", () => {
  for (
    const bad of ["eval(x)", "window.eval (s)", "new Function('a', 'return a')", "x = Function('return 1')"]
  ) {
    assert(offences(bad).length > 0, bad);
  }
  for (
    const ok of [
      "retrieval(x)",
      "evaluate(x)",
      "Runtime.evaluate",
      "isFunction(x)",
      "typeof f === 'function'",
    ]
  ) {
    assertEquals(offences(ok), [], ok);
  }
});
