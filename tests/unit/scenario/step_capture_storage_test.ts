import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import { cookiesAgree, documentCookies } from "../../../src/scenario/step_capture_storage.ts";

const cookie = (name: string, value: string, httpOnly = false): Protocol.Network.Cookie => ({
  name,
  value,
  domain: "a.test",
  path: "/",
  expires: -1,
  size: name.length + value.length,
  httpOnly,
  secure: false,
  session: true,
  priority: "Medium",
  sourceScheme: "NonSecure",
  sourcePort: 80,
});

Deno.test("the cookie store agrees with document.cookie only when every script-visible cookie matches", () => {
  assertEquals([...documentCookies(" a=1; b=x=y ;;")], ["a=1", "b=x=y"]);
  const view = documentCookies("a=1; b=2");
  assert(
    cookiesAgree([cookie("a", "1"), cookie("b", "2"), cookie("sid", "h", true)], view),
    "HttpOnly is not the page's",
  );
  assert(!cookiesAgree([cookie("a", "1")], view), "a cookie the page wrote has not reached the store");
  assert(!cookiesAgree([cookie("a", "1"), cookie("b", "old")], view), "a value the page changed");
  assert(!cookiesAgree([cookie("a", "1"), cookie("b", "2"), cookie("c", "3")], view), "one the page deleted");
  assert(cookiesAgree([cookie("", "bare")], documentCookies("bare")), "a nameless cookie reads as its value");
});
