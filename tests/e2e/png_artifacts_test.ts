/**
 * PNG artifacts end to end after the switch to built-ins (node:zlib deflate and CRC32, V8 base64):
 * the pictures a client gets inline and as resources are the same bytes, match their manifest's
 * hash and size, and decode in an independent decoder to the page's colours.
 */
import { decode } from "fast-png";
import { assert, assertEquals } from "../assert.ts";
import { e2e, type ServerHandle, structured, withServer } from "./harness.ts";
import { openPanel } from "./transition_flow.ts";

async function readBlob(server: ServerHandle, uri: string): Promise<{ base64: string; mimeType?: string }> {
  const res = await server.client.readResource({ uri });
  const first = res.contents[0] as { blob?: string; mimeType?: string };
  assert(first.blob, `${uri} is a blob`);
  return { base64: first.blob, mimeType: first.mimeType };
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

Deno.test({
  name: "png artifacts: inline and resource bytes agree, match the manifest hash and decode to the page",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const interaction = await openPanel(server, site.origin);
      const result = await server.call("generate_artifacts", {
        interaction_id: interaction,
        generators: ["storyboard", "difference_map"],
      });
      assert(!result.isError, `generate_artifacts failed: ${result.content[0]?.text}`);
      const artifacts = structured(result).artifacts as Array<
        { kind: string; uri: string; width: number; height: number; output_hash: string }
      >;
      assertEquals(artifacts.map((a) => a.kind).sort(), ["difference_map", "storyboard"]);
      const inline = result.content.find((c) => c.type === "image");
      assertEquals(inline?.mimeType, "image/png");

      const colours = new Map<string, Set<number>>();
      for (const a of artifacts) {
        const blob = await readBlob(server, a.uri);
        assertEquals(blob.mimeType, "image/png");
        const bytes = Uint8Array.fromBase64(blob.base64);
        assertEquals(await sha256(bytes), a.output_hash, `${a.kind}: resource bytes are the manifest's`);
        if (a === artifacts[0]) {
          assertEquals(inline?.data, blob.base64, "the inline image is the first resource");
        }
        const png = decode(bytes, { checkCrc: true });
        assertEquals([png.width, png.height], [a.width, a.height], `${a.kind} size`);
        const seen = new Set<number>();
        for (let i = 0; i < png.data.length; i += png.channels) {
          seen.add((png.data[i] << 16) | (png.data[i + 1] << 8) | png.data[i + 2]);
        }
        colours.set(a.kind, seen);
      }
      // The storyboard shows recorded frames: the page's grey background and the panel's blue.
      const board = [...(colours.get("storyboard") ?? [])];
      const near = (rgb: number, [r, g, b]: number[]) =>
        Math.abs((rgb >> 16) - r) < 24 && Math.abs(((rgb >> 8) & 255) - g) < 24 &&
        Math.abs((rgb & 255) - b) < 24;
      assert(
        board.some((c) => near(c, [0xf4, 0xf4, 0xf4])),
        "the page background is in the storyboard",
      );
      assert(board.some((c) => near(c, [0x10, 0x40, 0xc0])), "the panel's blue is in the storyboard");
      assert(
        (colours.get("difference_map")?.size ?? 0) > 16,
        "the difference map is a picture, not a flat fill",
      );
    }, { browser: { headless: true } }),
});
