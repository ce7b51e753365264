import { assert, assertEquals } from "../assert.ts";
import { e2e, type ServerHandle, startServer, structured, withServer } from "./harness.ts";
import { openPanel } from "./transition_flow.ts";

interface Probe {
  streams: Array<{ codec_type: string; codec_name: string; width?: number; height?: number }>;
  format: { format_name: string; duration: string };
}

async function probe(server: ServerHandle, uri: string): Promise<Probe> {
  const res = await server.client.readResource({ uri });
  const blob = (res.contents[0] as { blob?: string; mimeType?: string }).blob;
  assert(blob, "the video is readable as a resource");
  const path = await Deno.makeTempFile({ suffix: ".mp4" });
  try {
    await Deno.writeFile(path, Uint8Array.from(atob(blob), (c) => c.charCodeAt(0)));
    const out = await new Deno.Command("ffprobe", {
      args: ["-v", "error", "-show_streams", "-show_format", "-of", "json", path],
      stdout: "piped",
    }).output();
    assert(out.success, "ffprobe reads the file");
    return JSON.parse(new TextDecoder().decode(out.stdout));
  } finally {
    await Deno.remove(path).catch(() => {});
  }
}

Deno.test({
  name:
    "temporal video: real_time and model_optimized clips are H.264 MP4 without audio, as long as promised",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const interaction = await openPanel(server, site.origin);
      await new Promise((r) => setTimeout(r, 1_500));
      for (const policy of ["real_time", "model_optimized"] as const) {
        const result = await server.call("generate_temporal_video", {
          interaction_id: interaction,
          policy,
        });
        assert(!result.isError, `${policy} video failed: ${result.content[0]?.text}`);
        const video = structured(result) as {
          uri: string;
          duration_ms: number;
          fps: number;
          media_type: string;
          manifest_uri: string;
          range: { start_ns: number; end_ns: number };
        };
        assertEquals(video.media_type, "video/mp4");
        const p = await probe(server, video.uri);
        const streams = p.streams.map((s) => s.codec_type);
        assertEquals(streams, ["video"], `${policy}: one video stream and no audio`);
        assertEquals(p.streams[0].codec_name, "h264");
        assert(p.format.format_name.includes("mp4"), `${policy}: MP4 container (${p.format.format_name})`);
        const seconds = Number(p.format.duration);
        assert(
          Math.abs(seconds * 1000 - video.duration_ms) <= 1000 / video.fps + 1,
          `${policy}: duration ${seconds}s matches the promised ${video.duration_ms} ms`,
        );
        if (policy === "real_time") {
          const rangeMs = (video.range.end_ns - video.range.start_ns) / 1e6;
          // Real time starts at the first retained frame in range and lasts until the range end.
          assert(
            video.duration_ms <= rangeMs + 1000 / video.fps,
            `real_time ${video.duration_ms} ≤ range ${rangeMs} ms`,
          );
          assert(video.duration_ms >= rangeMs - 300, `real_time ${video.duration_ms} ≈ range ${rangeMs} ms`);
        }
        const manifest = await server.client.readResource({ uri: video.manifest_uri });
        const text = (manifest.contents[0] as { text?: string }).text ??
          atob((manifest.contents[0] as { blob?: string }).blob ?? "");
        const m = JSON.parse(text) as {
          presentation_policy: string;
          ffmpeg_build: string;
          encoder: string;
          output_hash: string;
        };
        assertEquals(m.presentation_policy, policy);
        assert(m.ffmpeg_build.startsWith("ffmpeg version"), `build recorded: ${m.ffmpeg_build}`);
        assert(
          m.encoder.length > 0 && /^sha256:[0-9a-f]{64}$/.test(m.output_hash),
          "encoder and hash recorded",
        );
      }
    }, { browser: { headless: true } }),
});

Deno.test({
  name: "temporal video: with ffmpeg hidden from PATH the video tool is not listed and status says why",
  ...e2e,
  fn: async () => {
    const empty = await Deno.makeTempDir({ prefix: "krometrail-no-ffmpeg-" });
    const server = await startServer({ env: { PATH: empty, KROMETRAIL_FFMPEG: "" } });
    try {
      const names = (await server.client.listTools()).tools.map((t) => t.name);
      assert(!names.includes("generate_temporal_video"), "the video tool is absent");
      assert(names.includes("temporal_debug_bundle"), "still-image artifacts remain");
      const status = structured(await server.call("browser_status", {}));
      const video =
        (status.server as { temporal_video: { available: boolean; reason?: string } }).temporal_video;
      assertEquals(video.available, false);
      assert(video.reason && !video.reason.includes(empty), `a reason without paths: ${video.reason}`);
    } finally {
      await server.close();
      await Deno.remove(empty, { recursive: true });
    }
  },
});
