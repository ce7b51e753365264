import { assert, assertEquals } from "../../assert.ts";
import {
  BODY_FULL_CAP_CHARS,
  fullBody,
  jsonShape,
  summarizeBody,
} from "../../../src/devtools/body_summary.ts";

const text = (body: string) => ({ body, base64Encoded: false });
const b64 = (bytes: Uint8Array) => ({ body: bytes.toBase64(), base64Encoded: true });

Deno.test("body summary: JSON shape, keys and counts, never values", () => {
  assertEquals(summarizeBody(text("[]"), "application/json").summary, "JSON array, 0 items");
  const s = summarizeBody(
    text(
      JSON.stringify({ items: [{ id: 1, secret: "zebra" }], total: 1, meta: { page: 1, of: 2 }, ok: true }),
    ),
    "application/json; charset=utf-8",
  );
  assertEquals(s.kind, "json");
  assertEquals(
    s.summary,
    "JSON object with keys items (array, 1 item), total (number), meta (object, 2 keys), ok (boolean) (4 keys)",
  );
  assert(!s.summary.includes("zebra"));
  assertEquals(jsonShape([{ a: 1, b: 2 }]), "array, 1 item; first: object with keys a, b (2 keys)");
  assertEquals(jsonShape([3, 4]), "array, 2 items; first: number");
  assertEquals(jsonShape({}), "object, 0 keys");
  assertEquals(jsonShape(null), "null");
  const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
  assert(jsonShape(many).endsWith(", … 8 more (20 keys)"), jsonShape(many));
  // application/problem+json and vendor types count as JSON.
  assertEquals(summarizeBody(text('{"type":"x"}'), "application/problem+json").kind, "json");
});

Deno.test("body summary: invalid JSON falls back to text, text gives length and a sanitized head", () => {
  const bad = summarizeBody(text("{not json"), "application/json");
  assertEquals(bad.kind, "text");
  assert(bad.summary.startsWith("not valid JSON; text, 9 chars"), bad.summary);
  const t = summarizeBody(text(`hello password=hunter2 ${"x".repeat(400)}`), "text/plain");
  assertEquals(t.chars, 423);
  assert(t.summary.startsWith('text, 423 chars: "hello password=<redacted>'), t.summary);
  assert(!t.summary.includes("hunter2"));
  assert(t.summary.endsWith("…"), "a long text says it goes on");
});

Deno.test("body summary: binary gives mime and bytes; base64 text is decoded; empty says so", () => {
  const png = summarizeBody(b64(new Uint8Array([137, 80, 78, 71, 0, 1, 2])), "image/png");
  assertEquals(png.kind, "binary");
  assertEquals(png.summary, "image/png, 7 bytes");
  assertEquals(png.bytes, 7);
  const json = summarizeBody(b64(new TextEncoder().encode('{"a":[]}')), "application/json");
  assertEquals(json.summary, "JSON object with keys a (array, 0 items) (1 key)");
  assertEquals(summarizeBody(text(""), "text/html").summary, "empty body");
  assertEquals(summarizeBody(text("é"), "text/plain").bytes, 2, "bytes are UTF-8 bytes");
});

Deno.test("full body: verbatim up to the cap, with the cap named; binary as base64", () => {
  const small = fullBody(text('{"label":"zebra"}'), "application/json");
  assertEquals(small.content, '{"label":"zebra"}');
  assertEquals(small.truncated, false);
  assertEquals(small.cap_chars, BODY_FULL_CAP_CHARS);
  const big = fullBody(text("y".repeat(BODY_FULL_CAP_CHARS + 10)), "text/plain");
  assertEquals(big.content.length, BODY_FULL_CAP_CHARS);
  assertEquals(big.truncated, true);
  // A cut never splits a surrogate pair.
  const emoji = fullBody(text("a" + "😀".repeat(10)), "text/plain", 4);
  assertEquals(emoji.content, "a😀");
  const bin = fullBody(b64(new Uint8Array([1, 2, 3])), "application/octet-stream");
  assertEquals(bin.encoding, "base64");
  assertEquals(bin.content, "AQID");
});
