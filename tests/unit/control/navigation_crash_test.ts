import { assertEquals } from "../../assert.ts";
import { navigation, type NavigationOp } from "../../../src/control/navigation.ts";
import type { ActionEnv } from "../../../src/control/interaction.ts";
import { pageCrashed } from "../../../src/browser/session_errors.ts";
import { ToolError } from "../../../src/errors.ts";

/** Stops the call once the page is resolved: what follows needs a browser. */
class Resolved extends Error {}

/** A session whose only page crashed: page() refuses it as session.ts does unless the caller allows it. */
function crashedEnv(asked: Array<{ crashed?: "allow" } | undefined>): ActionEnv {
  const session = {
    page(_id?: string, opts?: { crashed?: "allow" }) {
      asked.push(opts);
      if (opts?.crashed !== "allow") throw pageCrashed("p1", { at_ms: 1_200, status: "crashed" });
      throw new Resolved();
    },
  };
  return { session, detail: "concise", inlineImage: false } as unknown as ActionEnv;
}

async function outcome(op: NavigationOp): Promise<string> {
  const asked: Array<{ crashed?: "allow" } | undefined> = [];
  try {
    await navigation(
      crashedEnv(asked),
      op,
      { url: "about:blank", timeoutMs: 1_000, waitUntil: "load" },
      "p1",
    );
    return "returned";
  } catch (err) {
    assertEquals(asked.length, 1);
    if (err instanceof Resolved) return "resolved";
    return err instanceof ToolError ? err.code : String(err);
  }
}

Deno.test("navigation: reload and navigate reach a crashed page (they recover it); history moves get page_crashed", async () => {
  assertEquals(await outcome("reload"), "resolved");
  assertEquals(await outcome("navigate"), "resolved");
  // Going back or forward is not among the recoveries page_crashed names.
  assertEquals(await outcome("back"), "page_crashed");
  assertEquals(await outcome("forward"), "page_crashed");
});
