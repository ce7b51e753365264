/** The committed page bundles must be built from the committed entries and the rrweb version deno.json names. */
import { assert, assertEquals } from "../../assert.ts";
import { bundlesSourceHash } from "../../../build.ts";
import {
  BUNDLES_SOURCE_SHA256,
  RECORDER_BUNDLE,
  REPLAYER_BUNDLE,
} from "../../../src/pagestate/bundles_generated.ts";

Deno.test("bundles_generated.ts is built from the current page entries and rrweb version", async () => {
  assertEquals(
    BUNDLES_SOURCE_SHA256,
    await bundlesSourceHash(),
    "src/pagestate/bundles_generated.ts is stale: src/pagestate/page/*.ts or the rrweb version changed since " +
      "it was generated. Run `deno task build:bundles` (or `deno task build`) and commit the result",
  );
});

Deno.test("the bundles are classic scripts that define the rrweb entry points", () => {
  for (const [bundle, entry] of [[RECORDER_BUNDLE, "record"], [REPLAYER_BUNDLE, "Replayer"]] as const) {
    assert(bundle.startsWith("(()=>{"), "an IIFE, injectable as a classic script");
    assert(bundle.includes("__krometrailRrweb"), `defines the ${entry} entry`);
    assert(!/\bimport\s*\(/.test(bundle.slice(0, 200)), "no module syntax at the top");
  }
});
