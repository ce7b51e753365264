import { assertEquals } from "../assert.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";

Deno.test("deno task start runs the server under exactly the compiled binary's permissions", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const start = String(config.tasks.start).split(/\s+/);
  const flags = start.filter((a) => a.startsWith("--allow-"));
  assertEquals(flags, [...SERVER_PERMISSIONS]);
  assertEquals(start.slice(-2), ["main.ts", "mcp"]);
});
