import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface Hit {
  role: string;
  name: string;
  disabled?: boolean;
  covers?: { role: string; name: string };
}

interface Post {
  hit?: Hit;
  note?: string;
}

/** The centre of the first element matching a selector, in viewport CSS px. */
async function centre(server: ServerHandle, selector: string): Promise<{ x: number; y: number }> {
  const out = structured(
    await server.call("evaluate_page", {
      expression: `(() => { const r = document.querySelector(${
        JSON.stringify(selector)
      }).getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`,
    }),
  );
  return out.value as { x: number; y: number };
}

async function statusText(server: ServerHandle): Promise<string> {
  return structured(
    await server.call("evaluate_page", { expression: "document.getElementById('status').textContent" }),
  )
    .value as string;
}

async function click(server: ServerHandle, args: Record<string, unknown>) {
  const result = await server.call("click", args);
  const out = structured(result);
  assertEquals(out.status, "ok", textOf(result));
  return { post: out.postconditions as Post, text: textOf(result) };
}

Deno.test({
  name:
    "postconditions: a click on a disabled control, on an overlay or on plain text says what it hit and that nothing changed; a click by x/y always names its hit",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/noop.html` });

      const byLocator = await click(server, { locator: { role: "button", name: "Save draft" } });
      assertEquals(byLocator.post.hit?.role, "button");
      assertEquals(byLocator.post.hit?.name, "Save draft");
      assertEquals(byLocator.post.hit?.disabled, true);
      assertEquals(byLocator.post.note, "The target was disabled; nothing changed.");
      assert(byLocator.text.includes("The target was disabled; nothing changed."), byLocator.text);

      const save = await centre(server, "#save");
      const byPoint = await click(server, save);
      assertEquals(byPoint.post.hit?.role, "button");
      assertEquals(byPoint.post.hit?.name, "Save draft");
      assertEquals(byPoint.post.note, "The target was disabled; nothing changed.");
      assert(byPoint.text.includes('hit button "Save draft"'), byPoint.text);
      assertEquals(await statusText(server), "idle");

      const veil = await click(server, await centre(server, "#under"));
      assertEquals(veil.post.hit?.role, "generic");
      assertEquals(veil.post.hit?.covers, { role: "button", name: "Hidden action" });
      assert(veil.post.note?.includes('covering button "Hidden action"'), veil.post.note);
      assert(veil.post.note?.endsWith("nothing changed."), veil.post.note);
      assertEquals(await statusText(server), "idle");

      const plain = await click(server, await centre(server, "#plain"));
      assertEquals(plain.post.hit?.role, "paragraph");
      assert(plain.post.note?.includes("not a control"), plain.post.note);

      // A click that does what it says: the hit is named, and no note second-guesses it.
      const apply = await click(server, await centre(server, "#apply"));
      assertEquals(apply.post.hit, { role: "button", name: "Apply" });
      assertEquals(apply.post.note, undefined);
      assert(apply.text.includes('hit button "Apply"'), apply.text);
      assertEquals(await statusText(server), "applied");
    }, { browser: { headless: true } }),
});

Deno.test({
  name: "fill on a button says it matched a button (role and name), for a label locator too",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/noop.html` });
      for (const locator of [{ label: "Apply" }, { role: "button", name: "Apply" }, { text: "Apply" }]) {
        const result = await server.call("fill", { locator, value: "x" });
        assertEquals(errorCode(result), "not_editable", textOf(result));
        assert(textOf(result).includes('button "Apply"'), textOf(result));
        const details = (structured(result).error as { details?: { matched?: Hit } }).details;
        assertEquals(details?.matched?.role, "button");
        assertEquals(details?.matched?.name, "Apply");
      }
      // A label that names nothing at all is still no match.
      assertEquals(
        errorCode(await server.call("fill", { locator: { label: "Nowhere" }, value: "x" })),
        "locator_no_match",
      );
    }, { browser: { headless: true } }),
});
