/** The committed WASM module must be built from the committed AssemblyScript source. */
import { assert, assertEquals } from "../../assert.ts";
import { KERNELS_SOURCE_SHA256, KERNELS_WASM_BASE64 } from "../../../src/vision/wasm/kernels_wasm.ts";

const SOURCE = new URL("../../../src/vision/wasm/assembly/kernels.ts", import.meta.url);

Deno.test("kernels_wasm.ts is generated from the current AssemblyScript source", async () => {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(SOURCE)));
  const hash = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  assertEquals(
    KERNELS_SOURCE_SHA256,
    hash,
    "src/vision/wasm/kernels_wasm.ts is stale: src/vision/wasm/assembly/kernels.ts changed since it was " +
      "generated. Run `deno task build:wasm` (or `deno task build`) and commit the result",
  );
});

Deno.test("the generated module is valid WebAssembly that needs only env.abort", () => {
  const bytes = Uint8Array.fromBase64(KERNELS_WASM_BASE64);
  assert(WebAssembly.validate(bytes), "kernels_wasm.ts does not hold a valid module");
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(bytes));
  assertEquals(imports.map((i) => `${i.module}.${i.name}`), ["env.abort"]);
});
