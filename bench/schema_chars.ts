/**
 * Where the tools/list characters go: starts the real server, lists every tool and breaks each
 * descriptor's JSON length into name, description, inputSchema, outputSchema and the rest.
 * `deno run -A bench/schema_chars.ts [--json]`.
 */
import { startServer } from "../tests/e2e/harness.ts";

const server = await startServer();
try {
  const tools: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const page = await server.client.listTools(cursor ? { cursor } : {});
    tools.push(...(page.tools as Array<Record<string, unknown>>));
    cursor = page.nextCursor;
  } while (cursor);
  const len = (v: unknown) => (v === undefined ? 0 : JSON.stringify(v).length);
  const rows = tools.map((t) => {
    const total = len(t);
    const name = len(t.name), description = len(t.description);
    const input = len(t.inputSchema), output = len(t.outputSchema);
    return {
      tool: String(t.name),
      total,
      name,
      description,
      input,
      output,
      other: total - name - description - input - output,
    };
  }).sort((a, b) => b.total - a.total);
  const sum = (k: keyof typeof rows[0]) => rows.reduce((s, r) => s + (r[k] as number), 0);
  const total = JSON.stringify(tools).length;
  const init = server.client.getInstructions?.() ?? "";
  if (Deno.args.includes("--json")) {
    console.log(JSON.stringify({ total, count: tools.length, instructions: init.length, rows }));
  } else {
    console.log("tool".padEnd(28), "total  desc  input output other");
    for (const r of rows) {
      console.log(
        r.tool.padEnd(28),
        [r.total, r.description, r.input, r.output, r.other].map((n) => String(n).padStart(5)).join(" "),
      );
    }
    console.log(
      `\n${tools.length} tools, ${total} chars, ${Math.round(total / tools.length)} per tool; ` +
        `description ${sum("description")}, input ${sum("input")}, output ${sum("output")}, ` +
        `other ${sum("other") + sum("name")}; instructions ${init.length} chars`,
    );
  }
} finally {
  await server.close();
}
