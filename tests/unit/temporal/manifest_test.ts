import { assertEquals, assertMatch, assertThrows } from "../../assert.ts";
import {
  type ArtifactManifest,
  checkPopulations,
  headSlice,
  sha256Hex,
} from "../../../src/temporal/manifest.ts";

type Populations = Pick<
  ArtifactManifest,
  "source_frame_ids" | "analyzed_frame_ids" | "selected_frame_ids" | "omitted_frame_count" | "sampling"
>;

function sampled(over: Partial<Populations> = {}): Populations {
  return {
    source_frame_ids: [1, 2, 3, 4, 5, 6],
    analyzed_frame_ids: [1, 3, 5, 6],
    selected_frame_ids: [1, 5, 6],
    omitted_frame_count: 2,
    sampling: { sampling_mode: "uniform_stride", source_frame_count: 6, analyzed_frame_count: 4 },
    ...over,
  };
}

function whole(over: Partial<Populations> = {}): Populations {
  return {
    source_frame_ids: [10, 11, 12],
    analyzed_frame_ids: [10, 11, 12],
    selected_frame_ids: [10, 12],
    omitted_frame_count: 0,
    ...over,
  };
}

function refused(m: Populations, pattern: RegExp): void {
  const err = assertThrows(() => checkPopulations(m));
  assertMatch(err.message, /^inconsistent artifact manifest: /);
  assertMatch(err.message, pattern);
}

Deno.test("checkPopulations: consistent manifests pass, sampled or not", () => {
  checkPopulations(sampled());
  checkPopulations(whole());
  checkPopulations(whole({ selected_frame_ids: [] }));
  checkPopulations({
    source_frame_ids: [],
    analyzed_frame_ids: [],
    selected_frame_ids: [],
    omitted_frame_count: 0,
  });
  // Nothing thrown and nothing mutated.
  const m = sampled();
  checkPopulations(m);
  assertEquals(m, sampled());
});

Deno.test("checkPopulations: analyzed frames must be source frames", () => {
  refused(sampled({ analyzed_frame_ids: [1, 3, 5, 99] }), /analyzed frame 99 is not a source frame/);
});

Deno.test("checkPopulations: selected frames must have been analyzed", () => {
  refused(sampled({ selected_frame_ids: [1, 2] }), /selected frame 2 was not analyzed/);
  refused(whole({ selected_frame_ids: [13] }), /selected frame 13 was not analyzed/);
});

Deno.test("checkPopulations: the omitted count is exactly source minus analyzed", () => {
  refused(sampled({ omitted_frame_count: 1 }), /omitted 1 ≠ source 6 − analyzed 4/);
  refused(sampled({ omitted_frame_count: 3 }), /omitted 3 ≠ source 6 − analyzed 4/);
  refused(whole({ omitted_frame_count: 1 }), /omitted 1 ≠ source 3 − analyzed 3/);
});

Deno.test("checkPopulations: the sampling block is present exactly when frames were dropped", () => {
  refused(sampled({ sampling: undefined }), /sampling block present exactly when frames were dropped/);
  refused(
    whole({ sampling: { sampling_mode: "uniform_stride", source_frame_count: 3, analyzed_frame_count: 3 } }),
    /sampling block present exactly when frames were dropped/,
  );
});

Deno.test("checkPopulations: sampling counts must agree with the populations", () => {
  refused(
    sampled({
      sampling: { sampling_mode: "uniform_stride", source_frame_count: 7, analyzed_frame_count: 4 },
    }),
    /sampling counts disagree/,
  );
  refused(
    sampled({
      sampling: { sampling_mode: "uniform_stride", source_frame_count: 6, analyzed_frame_count: 3 },
    }),
    /sampling counts disagree/,
  );
});

Deno.test("checkPopulations: duplicate source ids are refused", () => {
  refused(whole({ source_frame_ids: [10, 11, 11, 12] }), /duplicate source frame ids/);
});

Deno.test("headSlice: a bounded head with the exact number left out", () => {
  const ids = [5, 6, 7, 8, 9];
  assertEquals(headSlice(ids, 3), { items: [5, 6, 7], omitted: 2 });
  assertEquals(headSlice(ids, 5), { items: ids, omitted: 0 });
  assertEquals(headSlice(ids, 12), { items: ids, omitted: 0 });
  assertEquals(headSlice(ids, 0), { items: [], omitted: 5 });
  assertEquals(headSlice([], 4), { items: [], omitted: 0 });
  const head = headSlice(ids, 2);
  head.items.push(100);
  assertEquals(ids, [5, 6, 7, 8, 9], "the input is not modified");
});

Deno.test("sha256Hex: the standard digest in lowercase hex", async () => {
  assertEquals(
    await sha256Hex(new Uint8Array()),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assertEquals(
    await sha256Hex(new TextEncoder().encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
