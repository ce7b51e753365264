import { assertEquals } from "../assert.ts";
import { refOf, type ServerHandle, structured } from "./harness.ts";

/**
 * Opens fixtures/site/transition.html and clicks "Open panel" (a 120 ms flash and a panel that
 * overshoots, then settles); returns the click's interaction id.
 */
export async function openPanel(server: ServerHandle, origin: string): Promise<string> {
  return String((await openPanelClick(server, origin)).interaction_id);
}

/** openPanel, returning the click's whole structured result (its timing_ms among it). */
export async function openPanelClick(server: ServerHandle, origin: string): Promise<Record<string, unknown>> {
  await server.call("navigate_page", { url: `${origin}/transition.html` });
  await new Promise((r) => setTimeout(r, 600));
  const snap = structured(await server.call("snapshot_page", {}));
  const clicked = structured(await server.call("click", { ref: refOf(snap, "button", "Open panel") }));
  assertEquals(clicked.status, "ok", `the click: ${JSON.stringify(clicked.warnings ?? [])}`);
  return clicked;
}
