// prepack/postpack of the npm package: `npm pack` (or `npm publish`) in npm/ first copies what the server
// runs from into npm/app/ (git-ignored), and removes it afterwards.
//   node pack.mjs stage | clean
// KROMETRAIL_REPO_ROOT names the checkout to copy from (default: the folder above this one), so a copy
// of npm/ elsewhere can be packed without staging anything inside the checkout (the e2e test does).
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const HERE = fileURLToPath(new URL("./", import.meta.url));
const REPO = process.env.KROMETRAIL_REPO_ROOT ? resolve(process.env.KROMETRAIL_REPO_ROOT) : join(HERE, "..");
const APP = join(HERE, "app");

/** What main.ts needs at run time, relative to the repo root. The demo and record serve fixtures/site. */
export const APP_FILES = [
  "main.ts",
  "deno.json",
  "deno.lock",
  "src",
  "fixtures/site",
];
/** Build inputs only: the AssemblyScript source is compiled into src/vision/wasm/kernels_wasm.ts. */
const SKIPPED = [join(REPO, "src", "vision", "wasm", "assembly")];

/** @param {string} path */
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

/** @param {string} source */
const wanted = (source) => !SKIPPED.some((s) => source.startsWith(s));

/** @param {string} message */
function fail(message) {
  process.stderr.write(`pack: ${message}\n`);
  process.exit(1);
}

function stage() {
  const denoVersion = readJson(join(REPO, "deno.json")).version;
  const npmVersion = readJson(join(HERE, "package.json")).version;
  if (denoVersion !== npmVersion) {
    fail(
      `npm/package.json is at ${npmVersion} but deno.json at ${denoVersion}: bump both (docs/release.md)`,
    );
  }
  rmSync(APP, { recursive: true, force: true });
  for (const file of APP_FILES) {
    const from = join(REPO, file);
    if (!existsSync(from)) fail(`${file} is missing from the checkout`);
    cpSync(from, join(APP, file), {
      recursive: true,
      filter: wanted,
    });
  }
  if (existsSync(join(REPO, "LICENSE"))) {
    cpSync(join(REPO, "LICENSE"), join(HERE, "LICENSE"));
  }
  process.stderr.write(
    `pack: staged npm/app (${APP_FILES.join(", ")}) for ${npmVersion}\n`,
  );
}

function clean() {
  rmSync(APP, { recursive: true, force: true });
  if (existsSync(join(REPO, "LICENSE"))) {
    rmSync(join(HERE, "LICENSE"), { force: true });
  }
}

const command = process.argv[2];
if (command === "stage") stage();
else if (command === "clean") clean();
else fail("usage: node pack.mjs stage | clean");
