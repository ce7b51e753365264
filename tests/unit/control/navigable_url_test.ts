import { assertEquals } from "../../assert.ts";
import { navigableUrl } from "../../../src/control/navigation.ts";
import { ToolError } from "../../../src/errors.ts";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ToolError ? err.code : String(err);
  }
  return undefined;
}

Deno.test("navigableUrl: file:// follows KROMETRAIL_ALLOW_FILE_URLS; other schemes are unaffected", () => {
  const on = { allowFileUrls: true };
  const off = { allowFileUrls: false };
  assertEquals(navigableUrl("file:///tmp/a.html", on), "file:///tmp/a.html");
  assertEquals(codeOf(() => navigableUrl("file:///tmp/a.html", off)), "file_urls_disabled");
  assertEquals(codeOf(() => navigableUrl("FILE:///etc/hostname", off)), "file_urls_disabled");
  assertEquals(navigableUrl("http://127.0.0.1:3000/x", off), "http://127.0.0.1:3000/x");
  assertEquals(navigableUrl("about:blank", off), "about:blank");
  assertEquals(codeOf(() => navigableUrl("javascript:alert(1)", on)), "invalid_url");
  assertEquals(codeOf(() => navigableUrl("/relative", on)), "invalid_url");
  try {
    navigableUrl("file:///x", off);
  } catch (err) {
    const e = (err as ToolError).toJSON();
    assertEquals(String(e.message).includes("KROMETRAIL_ALLOW_FILE_URLS=0"), true);
    assertEquals(e.retry, "never");
  }
});
