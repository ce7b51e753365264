import { assert, assertEquals } from "../assert.ts";
import { e2e, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

type Row = { role: string; name: string; value?: string };

async function snapshot(server: ServerHandle) {
  const result = await server.call("snapshot_page", { detail: "full" });
  assert(!result.isError, textOf(result));
  const s = structured(result);
  return { generation: s.snapshot_generation as number, nodes: s.nodes as Row[], text: textOf(result) };
}

async function evaluate(server: ServerHandle, expression: string): Promise<void> {
  const result = await server.call("evaluate_page", { expression });
  assert(!result.isError, textOf(result));
}

// snapshot_page answers from its last reading only while the page provably has not changed since; every
// kind of change below must show in the next snapshot.
Deno.test({
  name: "snapshot_page reuses its last reading only while no DOM change or target reading proves it stale",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/snapshot_reuse.html` });
      const first = await snapshot(server);
      const again = await snapshot(server);
      assertEquals(again.generation, first.generation, "nothing changed: the same snapshot");
      assertEquals(again.nodes, first.nodes);

      // Text outside every target (no target's reading moves).
      await evaluate(server, "document.getElementById('status').textContent = 'Loading 3 orders'");
      const status = await snapshot(server);
      assert(status.text.includes("Loading 3 orders"), status.text);
      assert(status.generation > first.generation);

      // A value set from script: no DOM mutation, only the target's reading changes.
      await evaluate(server, "document.getElementById('search').value = 'typed from script'");
      const typed = await snapshot(server);
      assertEquals(typed.nodes.find((n) => n.role === "textbox")?.value, "typed from script", typed.text);

      // A shadow root attached after the first reading, then text changed inside it.
      await evaluate(
        server,
        "document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<p id=inner>Inside the shadow</p>'",
      );
      const shadow = await snapshot(server);
      assert(shadow.text.includes("Inside the shadow"), shadow.text);
      await evaluate(
        server,
        "document.getElementById('host').shadowRoot.getElementById('inner').textContent = 'Changed in the shadow'",
      );
      const inner = await snapshot(server);
      assert(inner.text.includes("Changed in the shadow"), inner.text);

      // Unchanged again after all that: reused.
      assertEquals((await snapshot(server)).generation, inner.generation);
    }, { browser: { headless: true } }),
});
