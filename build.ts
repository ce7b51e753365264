/**
 * Builds the single krometrail binary with `deno compile`, and regenerates docs/tools.md.
 *
 *   deno task build [--target x86_64-unknown-linux-gnu|aarch64-apple-darwin|...] [--docs-only]
 *
 * `deno compile` needs the `denort` runtime for the target. Release machines download it; where
 * that is impossible, point DENORT_BIN at a local denort binary and it is used instead.
 */
import { renderToolsDoc } from "./src/mcp/docs.ts";

/** The exact permissions the compiled binary gets; the test suite runs the server with these. */
export const SERVER_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1,localhost,[::1]",
  "--allow-run",
  "--allow-sys",
];

export const TOOLS_DOC_PATH = new URL("./docs/tools.md", import.meta.url);

async function writeDocs(): Promise<void> {
  await Deno.writeTextFile(TOOLS_DOC_PATH, renderToolsDoc());
  console.error("wrote docs/tools.md");
}

async function compile(target: string | undefined): Promise<number> {
  const out = `dist/krometrail${target ? `-${target}` : ""}`;
  const args = [
    "compile",
    "--frozen",
    ...SERVER_PERMISSIONS,
    "--include",
    "fixtures/site",
    // Workers are separate module graphs; deno compile only embeds them when named.
    "--include",
    "src/capture/ingest_worker.ts",
    "--output",
    out,
    ...(target ? ["--target", target] : []),
    "main.ts",
  ];
  const env: Record<string, string> = {};
  const denort = Deno.env.get("DENORT_BIN");
  if (denort) env.DENORT_BIN = denort;
  const status = await new Deno.Command(Deno.execPath(), { args, env, stdout: "inherit", stderr: "inherit" })
    .spawn()
    .status;
  if (status.success) console.error(`built ${out} (run it as: ${out} mcp)`);
  return status.code;
}

if (import.meta.main) {
  await writeDocs();
  if (!Deno.args.includes("--docs-only")) {
    const i = Deno.args.indexOf("--target");
    Deno.exit(await compile(i >= 0 ? Deno.args[i + 1] : undefined));
  }
}
