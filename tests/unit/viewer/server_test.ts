import { assertEquals } from "../../assert.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { HumanQuestions } from "../../../src/viewer/questions.ts";
import { startViewer } from "../../../src/viewer/server.ts";

/** The viewer over real HTTP; these routes touch no recording, so the app is only its question list. */
Deno.test("the viewer server: the bare token redirects to the entry, HEAD is refused under api/", async (t) => {
  const app = { humans: new HumanQuestions() } as unknown as AppContext;
  const viewer = await startViewer(app);
  try {
    await t.step("/<token> is 308 to /<token>/ with its query kept", async () => {
      const res = await fetch(`${viewer.origin}/${viewer.token}?session=s1&at=12.5`, { redirect: "manual" });
      await res.body?.cancel();
      assertEquals(res.status, 308);
      assertEquals(res.headers.get("location"), `/${viewer.token}/?session=s1&at=12.5`);
      assertEquals(res.headers.get("cache-control"), "no-store");
      const bare = await fetch(`${viewer.origin}/${viewer.token}`, { redirect: "manual" });
      await bare.body?.cancel();
      assertEquals(bare.headers.get("location"), `/${viewer.token}/`);
      const followed = await fetch(`${viewer.origin}/${viewer.token}?ticket=q-1`);
      assertEquals([followed.status, followed.url], [200, `${viewer.url}?ticket=q-1`]);
      assertEquals(followed.headers.get("content-type")?.split(";")[0], "text/html");
      await followed.body?.cancel();
    });

    await t.step("HEAD under api/ is 405 with no body; GET still answers", async () => {
      const head = await fetch(`${viewer.url}api/questions`, { method: "HEAD" });
      assertEquals([head.status, await head.text()], [405, ""]);
      const get = await fetch(`${viewer.url}api/questions`);
      assertEquals([get.status, await get.json()], [200, { questions: [] }]);
      const page = await fetch(viewer.url, { method: "HEAD" });
      assertEquals([page.status, await page.text()], [200, ""]);
    });

    await t.step("a wrong token is still refused, slash or not", async () => {
      const wrong = await fetch(`${viewer.origin}/${viewer.token.slice(0, -1)}x`, { redirect: "manual" });
      assertEquals(wrong.status, 403);
      await wrong.body?.cancel();
    });
  } finally {
    await viewer.close();
  }
});
