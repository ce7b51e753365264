import { join, resolve } from "node:path";
import type { AppContext } from "../mcp/context.ts";
import type { ToolOutput } from "../mcp/response.ts";
import { toolsOf } from "../mcp/tool_runner.ts";
import { EVIDENCE_SCHEME } from "../store/instance.ts";
import { serveStatic } from "./static_server.ts";
import { saveTransition, TRANSITION_PAGE } from "./transition.ts";

interface Step {
  title: string;
  tool: string;
  /** Where later steps find this step's output; default the tool's name. */
  key?: string;
  args: (prev: Map<string, ToolOutput>) => Record<string, unknown>;
  /** Writes what the step produced beyond screenshots: the files it wrote and lines for the terminal. */
  after?: (out: ToolOutput) => Promise<{ files: string[]; console: string[] }>;
}

function findRef(out: ToolOutput | undefined, role: string, name: RegExp): string | undefined {
  const targets = (out?.structured.targets ?? []) as Array<{ ref?: string; role: string; name: string }>;
  return targets.find((t) => t.role === role && name.test(t.name))?.ref;
}

/**
 * A first look for people: drives headless Chrome through the same tool layer an MCP client uses,
 * prints each step with its timing, and writes screenshots and a report to a folder. On the bundled
 * fixture it also records a click with a brief wrong state and writes that click's storyboard and
 * difference map, which the report shows.
 */
export async function runDemo(app: AppContext, args: string[]): Promise<number> {
  const outFlag = args.indexOf("--out");
  const outName = outFlag >= 0 && args[outFlag + 1]
    ? args[outFlag + 1]
    : `krometrail-demo-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  // `deno task` runs in the config's folder; INIT_CWD is where the user typed the command.
  const outDir = resolve(Deno.env.get("INIT_CWD") || Deno.cwd(), outName);
  const userUrl = args.find((a, i) => !a.startsWith("--") && (outFlag < 0 || i !== outFlag + 1));
  const fixture = userUrl ? undefined : serveStatic();
  const url = userUrl ?? `${fixture?.origin}/index.html`;
  // A step whose tool this process does not offer (ffmpeg missing: no video) is left out, not failed.
  const tools = toolsOf(app);
  await Deno.mkdir(outDir, { recursive: true });
  console.log(`Writing screenshots${userUrl ? "" : ", the storyboard"} and report.md to ${outDir}\n`);
  const sections: string[] = [];

  const steps: Step[] = [
    {
      title: "Launch headless Chrome (temporary profile)",
      tool: "start_browser",
      args: () => ({ headless: true, temporary: true }),
    },
    { title: `Navigate to ${url}`, tool: "navigate_page", args: () => ({ url }) },
    { title: "Snapshot the page", tool: "snapshot_page", args: () => ({}) },
    { title: "Screenshot the viewport", tool: "take_screenshot", args: () => ({ inline_images: false }) },
  ];
  if (!userUrl) {
    steps.push(
      {
        title: 'Click "Show details" by ref',
        tool: "click",
        args: (prev) => ({ ref: findRef(prev.get("snapshot_page"), "button", /Show details/) }),
      },
      {
        title: "Fill the Name field by label",
        tool: "fill",
        args: () => ({ locator: { label: "Name" }, value: "Ada" }),
      },
      { title: "Press Enter to submit", tool: "press_keys", args: () => ({ keys: "Enter" }) },
      {
        title: "Open the heavy page",
        tool: "navigate_page",
        args: () => ({ url: `${fixture?.origin}/heavy.html` }),
      },
      { title: "Snapshot the heavy page", tool: "snapshot_page", args: () => ({}) },
      {
        title: "Open the transition page",
        tool: "navigate_page",
        args: () => ({ url: `${fixture?.origin}/${TRANSITION_PAGE}` }),
      },
      {
        title: 'Click "Save" (its banner flashes a wrong state first)',
        tool: "click",
        key: "save",
        args: () => ({ locator: { role: "button", name: "Save" } }),
      },
      {
        title: "Debug bundle of the Save click: what happened over time",
        tool: "temporal_debug_bundle",
        // Expanded lists the difference map too; the images are read from evidence, not inlined.
        args: (prev) => ({
          interaction_id: prev.get("save")?.structured.interaction_id,
          detail: "expanded",
          inline_images: false,
        }),
        after: async (out) => {
          const t = await saveTransition(app, out, outDir);
          sections.push(...t.report);
          return t;
        },
      },
    );
  }
  steps.push({ title: "Close the browser", tool: "stop_browser", args: () => ({}) });

  const report: string[] = [
    `# krometrail demo`,
    ``,
    `Target: ${url}`,
    ``,
    `| # | step | tool | ms | result |`,
    `|---|---|---|---|---|`,
  ];
  const outputs = new Map<string, ToolOutput>();
  let failures = 0;
  let shot = 0;
  let pictures = 0;
  for (const [i, step] of steps.entries()) {
    const tool = tools.get(step.tool);
    if (!tool) continue;
    const t0 = performance.now();
    const out = await tool.run(step.args(outputs), app);
    const ms = Math.round(performance.now() - t0);
    outputs.set(step.key ?? step.tool, out);
    const first = out.text.split("\n")[0];
    const extra = step.after ? await step.after(out) : { files: [], console: [] };
    console.log(
      `${String(i + 1).padStart(2)}. ${step.title} — ${ms} ms${out.isError ? " FAILED" : ""}\n${
        [first, ...extra.console].map((l) => `    ${l}`).join("\n")
      }`,
    );
    if (out.isError) failures++;
    const uris = [out.structured.uri, (out.structured.screenshot as { uri?: string } | undefined)?.uri]
      .filter((u): u is string => typeof u === "string" && u.startsWith(EVIDENCE_SCHEME));
    const files: string[] = [...extra.files];
    for (const uri of uris) {
      const { bytes } = await app.store.readEvidence(uri.slice(EVIDENCE_SCHEME.length));
      const name = `${String(++shot).padStart(2, "0")}-${step.tool}.${uri.endsWith(".jpg") ? "jpg" : "png"}`;
      await Deno.writeFile(join(outDir, name), bytes);
      files.push(name);
    }
    pictures += files.length;
    report.push(
      `| ${i + 1} | ${step.title} | ${step.tool} | ${ms} | ${out.isError ? "**failed** " : ""}${
        first.replace(/\|/g, "\\|")
      }${files.map((f) => ` [${f}](${f})`).join("")} |`,
    );
  }
  fixture?.close();
  await Deno.writeTextFile(join(outDir, "report.md"), [...report, ...sections].join("\n") + "\n");
  console.log(`\nWrote ${pictures} images and report.md to ${outDir}/`);
  return failures === 0 ? 0 : 1;
}
