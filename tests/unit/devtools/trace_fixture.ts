import { gunzipSync } from "fflate";
import type * as Trace from "@paulirish/trace_engine";

/**
 * Traces recorded from fixtures/site/performance/shift.html with the tool's categories (the
 * screenshot and CPU-profile streams dropped to keep them small): `shift_reload` a reload (late
 * banner, 200 ms busy loop), `click_inp` a click on the 150 ms handler. They predate the fixture's
 * `main { display: flow-root }`, so their one shift's source is `body`; the e2e test checks the named
 * sources on the live fixture.
 */
export async function loadTraceFixture(
  name: "shift_reload" | "click_inp",
): Promise<Trace.Types.Events.Event[]> {
  const bytes = await Deno.readFile(new URL(`../../../fixtures/traces/${name}.json.gz`, import.meta.url));
  const json = JSON.parse(new TextDecoder().decode(gunzipSync(bytes))) as {
    traceEvents: Trace.Types.Events.Event[];
  };
  return json.traceEvents;
}
