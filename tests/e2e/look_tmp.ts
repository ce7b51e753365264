import { refOf, structured, withServer } from "./harness.ts";
await withServer(async (server, site) => {
  await server.call("navigate_page", { url: `${site.origin}/transition.html` });
  await new Promise((r) => setTimeout(r, 600));
  const snap = structured(await server.call("snapshot_page", {}));
  const clicked = structured(await server.call("click", { ref: refOf(snap, "button", "Open panel") }));
  const t0 = performance.now();
  const result = await server.call("temporal_debug_bundle", { interaction_id: String(clicked.interaction_id), detail: "expanded" });
  console.log("bundle ms", performance.now() - t0);
  console.log(result.content[0].text);
  const b = structured(result);
  const t1 = performance.now();
  await server.call("temporal_debug_bundle", { interaction_id: String(clicked.interaction_id), detail: "expanded" });
  console.log("cached ms", performance.now() - t1);
  const views = (b.bundles as Array<{ artifacts: Array<{ kind: string; uri: string }> }>)[0].artifacts;
  const gen = structured(await server.call("generate_artifacts", { interaction_id: String(clicked.interaction_id), generators: ["motion_history", "region_filmstrip"], region: { x: 30, y: 250, width: 700, height: 140 } }));
  for (const a of [...views, ...(gen.artifacts as Array<{ kind: string; uri: string }>)]) {
    const res = await server.client.readResource({ uri: a.uri });
    const c = res.contents[0] as { blob?: string };
    await Deno.writeFile(`/tmp/look/${a.kind}.png`, Uint8Array.from(atob(c.blob ?? ""), (ch) => ch.charCodeAt(0)));
  }
}, { browser: { headless: true } });
