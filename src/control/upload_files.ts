import { basename, isAbsolute, resolve } from "node:path";
import { currentConfig } from "../config.ts";
import { ToolError } from "../errors.ts";
import { elementOnly, readBack } from "./element_action.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { addLine, addWarning, type Observation } from "./observation.ts";
import { describeElementSource, pageForTarget, resolveTarget, type TargetSpec } from "./targeting.ts";

/**
 * upload_files: checking the paths on disk before anything touches the page, finding the one
 * native file input behind the target (a label, button or field container is accepted), and
 * setting the files on it with DOM.setFileInputFiles so input and change fire as for a user.
 */

export const UPLOAD_MAX_FILES = 32;

type PathProblem =
  | "not_found"
  | "permission_denied"
  | "directory"
  | "not_regular_file"
  | "unreadable"
  | "invalid";

function pathError(index: number, given: string, problem: PathProblem, why: string): ToolError {
  return new ToolError({
    code: "upload_path_invalid",
    message: `paths[${index}] ${JSON.stringify(given.slice(0, 200))} ${why}; nothing was uploaded.`,
    retry: "never",
    recovery: problem === "directory"
      ? "Pass the files inside the directory, one path each."
      : "Pass an existing, readable regular file.",
    affected: { argument: `paths.${index}` },
    details: { index, problem },
  });
}

/**
 * A relative path has no base the caller chose: the server's cwd is wherever the MCP client started
 * it. It resolves against KROMETRAIL_UPLOAD_ROOT when the operator set one, and is refused otherwise.
 */
function absoluteUploadPath(index: number, given: string, base: string | undefined): string {
  if (isAbsolute(given)) return given;
  if (base !== undefined) return resolve(base, given);
  throw new ToolError({
    code: "upload_path_relative",
    message: `paths[${index}] ${
      JSON.stringify(given.slice(0, 200))
    } is relative and no upload base is configured; nothing was uploaded.`,
    retry: "never",
    recovery:
      "Pass an absolute path, or have the operator set KROMETRAIL_UPLOAD_ROOT (an absolute directory relative paths resolve against).",
    affected: { argument: `paths.${index}` },
    details: { index, problem: "relative", variable: "KROMETRAIL_UPLOAD_ROOT" },
  });
}

/**
 * The spec's upload path authority: each path is made absolute (see absoluteUploadPath), canonicalized
 * (symlinks resolved) and must be a regular readable file. There is no containment: the upload base
 * only anchors relative paths, and the caller holds the operator's authority.
 */
export async function canonicalUploadPaths(
  paths: string[],
  base: string | undefined = currentConfig().uploadRoot,
): Promise<string[]> {
  const out: string[] = [];
  for (const [i, given] of paths.entries()) {
    let real: string;
    try {
      real = await Deno.realPath(absoluteUploadPath(i, given, base));
    } catch (err) {
      if (err instanceof ToolError) throw err;
      if (err instanceof Deno.errors.NotFound) throw pathError(i, given, "not_found", "does not exist");
      if (err instanceof Deno.errors.PermissionDenied) {
        throw pathError(i, given, "permission_denied", "cannot be resolved (permission denied)");
      }
      throw pathError(
        i,
        given,
        "invalid",
        `cannot be resolved (${err instanceof Error ? err.name : "error"})`,
      );
    }
    const info = await Deno.stat(real).catch(() => undefined);
    if (!info) throw pathError(i, given, "not_found", "does not exist");
    if (info.isDirectory) throw pathError(i, given, "directory", "is a directory, not a file");
    if (!info.isFile) {
      throw pathError(i, given, "not_regular_file", "is not a regular file (a device, socket or pipe)");
    }
    try {
      (await Deno.open(real, { read: true })).close();
    } catch {
      throw pathError(i, given, "unreadable", "is not readable (permission denied)");
    }
    out.push(real);
  }
  return out;
}

/**
 * Resolves a semantic affordance to its one native file input: the input itself; a label's control
 * (also for an element inside a label); the ids named by `for` or `aria-controls`; the single file
 * input inside the element; or the single one in its nearest field container (at most three levels
 * up, stopping at a form or fieldset). Returns {input, via} or {count, via} when not unique.
 */
const FIND_FILE_INPUT = `function() {
  const isFile = (n) => !!n && n.nodeType === 1 && n.tagName === "INPUT" && (n.type || "").toLowerCase() === "file";
  const pick = (list, via) => list.length === 1 ? { input: list[0], via, count: 1 } : list.length > 1 ? { via, count: list.length } : null;
  const files = (n) => [...n.querySelectorAll('input[type="file" i]')];
  if (isFile(this)) return { input: this, via: "target", count: 1 };
  const label = this.tagName === "LABEL" ? this : this.closest ? this.closest("label") : null;
  if (label && isFile(label.control)) return { input: label.control, via: "label", count: 1 };
  const root = this.getRootNode ? this.getRootNode() : document;
  const byId = (id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id));
  for (const attr of ["for", "aria-controls"]) {
    const ids = (this.getAttribute(attr) || "").split(/\\s+/).filter(Boolean);
    const found = pick([...new Set(ids.map(byId).filter(isFile))], attr);
    if (found) return found;
  }
  const inside = pick(files(this), "descendant");
  if (inside) return inside;
  let n = this.parentElement;
  for (let depth = 0; n && depth < 3 && n !== document.body && n !== document.documentElement; depth++, n = n.parentElement) {
    const found = pick(files(n), "container");
    if (found) return found;
    if (n.tagName === "FORM" || n.tagName === "FIELDSET") break;
  }
  return { via: "none", count: 0 };
}`;

const FILE_INPUT_STATE = `function() {
  return { disabled: !!this.disabled, multiple: !!this.multiple, accept: (this.accept || "").slice(0, 200) };
}`;

const READ_FILES = `function() {
  return { count: this.files ? this.files.length : 0, names: this.files ? [...this.files].map((f) => f.name.slice(0, 200)) : [] };
}`;

const UPLOAD_GROUP = "krometrail-upload";

/** Sets files on the native file input behind the target; input and change fire as for a user's choice. */
export async function uploadFiles(
  env: ActionEnv,
  spec: TargetSpec,
  paths: string[],
  pageId?: string,
): Promise<Observation> {
  const startedMs = env.session.now();
  const canonical = await canonicalUploadPaths(paths);
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  const target = elementOnly(await resolveTarget(env.session, spec, page.id), "upload_files", "file input");
  try {
    const found = await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: FIND_FILE_INPUT,
      objectGroup: UPLOAD_GROUP,
    });
    if (found.exceptionDetails || !found.result.objectId) {
      throw new ToolError({
        code: "file_input_not_found",
        message: "The page did not let Krometrail look for the file input behind the target.",
        retry: "safe",
        recovery: 'Target the native input[type=file] directly (e.g. selector "input[type=file]").',
        affected: { page_id: page.id, ref: target.ref },
      });
    }
    const summary = (await page.send("Runtime.callFunctionOn", {
      objectId: found.result.objectId,
      functionDeclaration: "function() { return { via: this.via, count: this.count }; }",
      returnByValue: true,
    })).result.value as { via: string; count: number };
    if (summary.count !== 1) {
      const described = (await page.send("Runtime.callFunctionOn", {
        objectId: target.objectId,
        functionDeclaration: describeElementSource,
        returnByValue: true,
      })).result.value;
      throw new ToolError({
        code: summary.count === 0 ? "file_input_not_found" : "file_input_ambiguous",
        message: summary.count === 0
          ? `No native input[type=file] is associated with ${String(described).slice(0, 120)}.`
          : `${summary.count} file inputs are associated with ${
            String(described).slice(0, 120)
          } (via ${summary.via}); nothing was uploaded.`,
        retry: "never",
        recovery:
          'upload_files needs the native input[type=file]: target it directly (e.g. selector "input[type=file]#id"), or a <label for> / button whose field contains exactly one file input.',
        affected: { page_id: page.id, ref: target.ref },
        details: { resolution: summary.via, file_inputs: summary.count },
      });
    }
    const inputObj = await page.send("Runtime.callFunctionOn", {
      objectId: found.result.objectId,
      functionDeclaration: "function() { return this.input; }",
      objectGroup: UPLOAD_GROUP,
    });
    const inputId = inputObj.result.objectId as string;
    const state = (await page.send("Runtime.callFunctionOn", {
      objectId: inputId,
      functionDeclaration: FILE_INPUT_STATE,
      returnByValue: true,
    })).result.value as { disabled: boolean; multiple: boolean; accept: string };
    if (state.disabled) {
      throw new ToolError({
        code: "not_editable",
        message: "The file input is disabled.",
        retry: "after_recovery",
        recovery: "Wait until the page enables it, then retry.",
        affected: { page_id: page.id, ref: target.ref },
      });
    }
    if (canonical.length > 1 && !state.multiple) {
      throw new ToolError({
        code: "invalid_arguments",
        message: `This file input takes one file, but ${canonical.length} paths were given.`,
        retry: "never",
        recovery: "Pass a single path; only <input type=file multiple> accepts several.",
        affected: { argument: "paths", ref: target.ref },
      });
    }
    const { node } = await page.send("DOM.describeNode", { objectId: inputId });
    const names = canonical.map((p) => basename(p));
    const shownTarget = { ref: target.ref, via: target.via };
    const params = {
      target: shownTarget,
      file_input: summary.via,
      file_count: names.length,
      file_names: names,
    };
    const observation = await interact(env, page, "upload_files", params, async () => {
      await page.send("DOM.setFileInputFiles", { files: canonical, backendNodeId: node.backendNodeId });
    }, startedMs);
    observation.structured.target = shownTarget;
    observation.structured.upload = { file_input: summary.via, file_count: names.length, file_names: names };
    addLine(observation, `uploaded ${names.length} file(s) via ${summary.via}: ${names.join(", ")}`);
    if (!page.dialog) {
      const read = await readBack(page, node.backendNodeId, READ_FILES) as
        | { count: number; names: string[] }
        | undefined;
      if (read && read.count !== names.length) {
        addWarning(
          observation,
          `files_differ: the input holds ${read.count} file(s) after the upload (script reset it?)`,
        );
      }
    }
    return observation;
  } finally {
    page.send("Runtime.releaseObjectGroup", { objectGroup: UPLOAD_GROUP }).catch(() => {});
  }
}
