/**
 * Background warm-up of what a process's first artifact request would otherwise pay for (measured
 * 0.5–1 s beside a warm one): the WASM kernels' compilation, and the JPEG decoder, analysis, renderers,
 * PNG encoder and hashing running at V8's slowest tiers. A synthetic debug bundle over a tiny embedded
 * frame (1280×96, the width of a typical viewport, so the same decode scales run) goes through the very
 * code a bundle uses. It writes nothing (its "files" go nowhere) and prints nothing; every stage runs in
 * its own turn of the event loop, so a tool call arriving meanwhile waits for one small stage at most.
 */
import type { FrameRow } from "../capture/frames.ts";
import { decodeJpeg } from "../vision/jpeg_decode.ts";
import { encodePng } from "../vision/png.ts";
import type { RgbaImage } from "../vision/image.ts";
import { analyzeEpochSteps } from "./analysis.ts";
import type { ArtifactEnv } from "./artifacts.ts";
import { bundleResults } from "./bundle.ts";
import { splitEpochs } from "./frames.ts";
import { kernelOps } from "./pixel_ops.ts";
import { type Prepared, TemporalCache } from "./prepare.ts";
import type { ResolvedRange } from "./range.ts";
import { nextTurn, runStepsYielding } from "./steps.ts";

/** White, a blue button, two text lines and a red panel (ffmpeg mjpeg, 4:2:0 like Chrome's frames). */
const FRAME_JPEG =
  "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgQEBMQExYWFhYWFhoYGhsbGxoaGhobGxsdHR0iIiIdHR0bGx0dICAiIiUmJSMjIiMmJigoKDAwLi44ODpFRVP/xACHAAEBAQEBAAAAAAAAAAAAAAAACAcGBQEBAQEBAQEAAAAAAAAAAAAAAAUGAwQHEAEAAQMEAwABAwMEAwEAAAAAowUDFtNkVONTFdISEQITAQQUIjJRMSNCYgYRAQAAAwUHAgcBAQAAAAAAAAADAgETUqFR0ZGi0hEUEhXBBAWCgUMhQsJBMf/AABEIAGAFAAMBIgACEQADEQD/2gAMAwEAAhEDEQA/AN/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABO/val547Xw4zz0k5c+f5Uvb+1n9z3dtZadvLn3c/955UrkogTv72peeO18Hval547Xw428uVcNVLxca9D2zcKiBO/val547Xwe9qXnjtfBby5Vw1PFxr0PbNwqIE7+9qXnjtfB72peeO18FvLlXDU8XGvQ9s3CogTv72peeO18Hval547XwW8uVcNTxca9D2zcKiBO/val547Xwe9qXnjtfBby5Vw1PFxr0PbNwqIE7+9qXnjtfB72peeO18FvLlXDU8XGvQ9s3CogTv72peeO18Hval547XwW8uVcNTxca9D2zcKiBO/val547Xwe9qXnjtfBby5Vw1PFxr0PbNwqIE7+9qXnjtfB72peeO18FvLlXDU8XGvQ9s3CogTv72peeO18Hval547XwW8uVcNTxca9D2zcKiBO/val547Xwe9qXnjtfBby5Vw1PFxr0PbNwqIE7+9qXnjtfB72peeO18FvLlXDU8XGvQ9s3CogTv72peeO18Hval547XwW8uVcNTxca9D2zcKiBO/val547Xwe9qXnjtfBby5Vw1PFxr0PbNwqIE7+9qXnjtfCiHaSek/Plz/Cb7j2s/tu3urLXu58u3n/nLOlMwB2TQAAAAABkGV7Sbqa+kBb9nBki9/fTny7eX5rT/ALzyq8UaeaXlyry/62DK9pN1GV7SbqY+LfSQLm9Nq8drPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaNgyvaTdRle0m6mPh0kC5vTalrPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaNgyvaTdRle0m6mPh0kC5vTalrPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaNgyvaTdRle0m6mPh0kC5vTalrPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaNgyvaTdRle0m6mPh0kC5vTalrPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaNgyvaTdRle0m6mPh0kC5vTalrPnhTRsGV7SbqMr2k3Ux8OkgXN6bUtZ88KaK/AYlZAAAAAeN/d1D+1/sPw/wAi5/H+f6/j/p/f+79fx/T9f9v7f6/8/wBP+weyOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjjMhpfIivaZkNL5EV7TB2Y4zIaXyIr2mZDS+RFe0wdmOMyGl8iK9pmQ0vkRXtMHZjxv7Sof2v8Af/n/AI9z+T8P0/L/AE/v/b+n5fr+n+79v9P+P6/9PZAAAAAAAAAAASSrZJKfH/X6+jYfCfu/J/QAnNgAAAAAAAAAAAAAAAAAAAAAAAAAAK2SSrZRgft9PVj/AIt9r5/5AFBjwAAAAABICv0gNJ8P+58vqne4/X6+gA0icAAAAAAAAAAAAAAAAAAAAAAr8B83aIAAAAcZV6R7X+H/AM38X8X5/wDp+f6/n+P/AN/t/T9PxdmAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMAxnEd5B2mI7yDtbMA4ykUj1X83/m/l/l/D/0/D9Pw/L/7/d+v6/k7MAAAAAAAAAAAEkq2SSnx/wBfr6Nh8J+78n9ACc2AAAAAAAAAAAAAAAAAAAAAAAAAAArZJKtlGB+309WP+Lfa+f8AkAUGPAAAAAAEgK/ZBim7h7Vv2caSF399eXPt5fitf+c8qPFGkmm5cqZsfGwYpu4e0xTdw9q31cC/uzaPHZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrHxsGKbuHtMU3cPadXAv7s2hZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrHxsGKbuHtMU3cPadXAv7s2hZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrHxsGKbuHtMU3cPadXAv7s2hZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrHxsGKbuHtMU3cPadXAv7s2hZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrHxsGKbuHtMU3cPadXAv7s2hZT5Y01Y+NgxTdw9pim7h7Tq4F/dm0LKfLGmrXwGJWQAAABmf/wCjqH91/Yf43+Pc/j/P+X8v9P7P3fr+P4fp/u/b/X/n+v8A00wBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQEzZDVORFZ0zIapyIrOmpkBM2Q1TkRWdMyGqciKzpqZATNkNU5EVnTMhqnIis6amQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABJKtkkp8f9fr6Nh8J+78n9ACc2AAAAAAAAAAAAAAAAAAAAAAAAAAArZJKtlGB+309WP+Lfa+f+QBQY8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAASSrZJKfH/X6+jYfCfu/J/QAnNgAAAAAAAAAAAAAAAAAAAAAAAAAAK2SSrZRgft9PVj/AIt9r5/5AFBjwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABO/oql4JLX2ogcZ5KT8ufP8KXt/dT+27u2kte7lz7uf+c8q0zTv6KpeCS19noql4JLX2ogcbCXOuGil5SNdh7JuJO/oql4JLX2eiqXgktfaiAsJc64aHlI12Hsm4k7+iqXgktfZ6KpeCS19qICwlzrhoeUjXYeybiTv6KpeCS19noql4JLX2ogLCXOuGh5SNdh7JuJO/oql4JLX2eiqXgktfaiAsJc64aHlI12Hsm4k7+iqXgktfZ6KpeCS19qICwlzrhoeUjXYeybiTv6KpeCS19noql4JLX2ogLCXOuGh5SNdh7JuJO/oql4JLX2eiqXgktfaiAsJc64aHlI12Hsm4k7+iqXgktfZ6KpeCS19qICwlzrhoeUjXYeybiTv6KpeCS19noql4JLX2ogLCXOuGh5SNdh7JuJO/oql4JLX2eiqXgktfaiAsJc64aHlI12Hsm4k7+iqXgktfZ6KpeCS19qICwlzrhoeUjXYeybiTv6KpeCS19noql4JLX2ogLCXOuGh5SNdh7JuJO/oql4JLX2eiqXgktfaiAsJc64aHlI12Hsm4k7+iqXgktfaiAdpJKSc+XP8pvuPdT+57e6ktO3ny7ef+8s61yAHZNAAf/Z";

const MS = 1_000_000;
const FRAMES = 6;
/** Rounds of the whole bundle: V8 optimizes hot code after it has run a few times, not once. */
const ROUNDS = 3;

function frameRow(i: number, width: number, height: number): FrameRow {
  const t = i * 100;
  return {
    frame_id: i + 1,
    session_id: "warm",
    page_id: "warm",
    ordinal: i + 1,
    session_time_ns: t * MS,
    session_time_ms: t,
    chrome_timestamp: null,
    format: "jpeg",
    width,
    height,
    viewport: { width, height, device_scale: 1 },
    changed_proportion: null,
    change_bounds: null,
    warnings: [],
    uri: `krometrail://warm/${i + 1}.jpg`,
  };
}

/** The frame with a dark bar grown by frame: each frame differs, so change, peaks and transients run. */
function framePixels(jpeg: Uint8Array, index: number, scale: 1 | 2 | 4 | 8): RgbaImage {
  const img = decodeJpeg(jpeg, { scale });
  const bar = Math.min(img.width, Math.round(((index % FRAMES) + 1) * img.width / (FRAMES + 2)));
  for (let y = Math.floor(img.height / 2); y < img.height; y++) {
    img.data.fill(40, (y * img.width) * 4, (y * img.width + bar) * 4);
  }
  return img;
}

function syntheticRange(endNs: number): ResolvedRange {
  return {
    resolved: true,
    session_id: "warm",
    page_id: "warm",
    start_ns: 0,
    end_ns: endNs,
    start_ms: 0,
    end_ms: endNs / MS,
    duration_ms: endNs / MS,
    anchor: { kind: "interaction", id: "warm", at_ns: 150 * MS, at_ms: 150 },
    requested: { start_ns: 0, end_ns: endNs },
    complete: true,
    warnings: [],
    gaps: [],
  };
}

/** One synthetic bundle, every stage in its own turn; nothing is written. */
async function warmRound(jpeg: Uint8Array, width: number, height: number): Promise<void> {
  const frames = Array.from({ length: FRAMES }, (_, i) => frameRow(i, width, height));
  const range = syntheticRange(FRAMES * 100 * MS);
  const ops = kernelOps((f, scale) => framePixels(jpeg, f.frame_id - 1, scale));
  const cache = new TemporalCache();
  const epochs = splitEpochs(frames);
  const analysis = await runStepsYielding(
    analyzeEpochSteps({
      epoch: epochs[0],
      start_ns: range.start_ns,
      end_ns: range.end_ns,
      anchor_ns: range.anchor.at_ns,
      gaps: [],
      measure_from_anchor: true,
    }, { ...ops, decode: (f, s) => cache.frame(f, s, () => ops.decode(f, s)) }),
    4,
  );
  await nextTurn();
  const prepared: Prepared = {
    range,
    epochs,
    chosen: epochs,
    analyses: [analysis],
    markers: [],
    truncated: false,
    earlier_document_frames: 0,
  };
  let written = 0;
  const env: ArtifactEnv = {
    // Only preparing a range reads the index, and the warm-up hands over a prepared one.
    db: undefined as unknown as ArtifactEnv["db"],
    ops,
    cache,
    encodePng,
    write: (ext) => Promise.resolve({ uri: `krometrail://warm/${++written}.${ext}` }),
    captureConfig: () => ({ every_nth_frame: 1, focus: "foreground" }),
  };
  await bundleResults(env, prepared, [], { epochs: "anchor", max_tiles: 8, detail: "concise" });
}

/** Runs the warm-up rounds; resolves when done (failures are the caller's to log, never to surface). */
export async function warmTemporal(rounds = ROUNDS): Promise<void> {
  const jpeg = Uint8Array.fromBase64(FRAME_JPEG);
  const { width, height } = decodeJpeg(jpeg, { scale: 8 });
  for (let i = 0; i < rounds; i++) {
    await nextTurn();
    await warmRound(jpeg, width * 8, height * 8);
  }
}
