import { basename } from "node:path";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import type { Observation } from "./observation.ts";
import {
  describeElementSource,
  pageForTarget,
  type ResolvedTarget,
  resolveTarget,
  type TargetSpec,
} from "./targeting.ts";

type ElementTarget = Extract<ResolvedTarget, { kind: "element" }>;

function elementOnly(target: ResolvedTarget, tool: string, what: string): ElementTarget {
  if (target.kind === "element") return target;
  throw new ToolError({
    code: "invalid_target",
    message: `${tool} needs an element (ref, locator or selector), not coordinates.`,
    retry: "never",
    recovery: `Pass the ${what}'s ref from snapshot_page, or a locator like {"label": "..."}.`,
  });
}

function addLine(obs: Observation, line: string): void {
  const [head, ...rest] = obs.text.split("\n");
  obs.text = [head, line, ...rest].join("\n");
}

function warn(obs: Observation, warning: string): void {
  const warnings = (obs.structured.warnings as string[] | undefined) ?? [];
  warnings.push(warning);
  obs.structured.warnings = warnings;
}

// -------------------------------------------------------------------------------------- select_option

export type OptionChoice =
  | { by: "value"; values: string[] }
  | { by: "label"; values: string[] }
  | { by: "index"; values: number[] };

/** At most this many options are listed when a requested one is missing. */
const OPTION_SAMPLE = 25;
const OPTION_TEXT_CAP = 80;

const SELECT_KIND = `function() {
  const tag = this.tagName ? this.tagName.toLowerCase() : "";
  return {
    tag,
    type: tag === "input" ? (this.type || "text").toLowerCase() : undefined,
    list: tag === "input" && !!this.getAttribute("list"),
    role: this.getAttribute ? this.getAttribute("role") : null,
    multiple: tag === "select" && this.multiple,
    disabled: !!this.disabled || (this.matches && this.matches(":disabled")),
    options: tag === "select" ? this.options.length : 0,
  };
}`;

/** Finds the requested options; on a miss returns a bounded sample of what exists. */
const MATCH_OPTIONS = `function(by, wanted, sampleCap, textCap) {
  const norm = (s) => String(s).replace(/\\s+/g, " ").trim();
  const opts = [...this.options];
  const show = (o) => ({
    index: o.index,
    value: o.value.slice(0, textCap),
    label: norm(o.label).slice(0, textCap),
    ...(o.disabled ? { disabled: true } : {}),
  });
  const indexes = [];
  const missing = [];
  for (const w of wanted) {
    let hit = -1;
    if (by === "index") hit = Number.isInteger(w) && w >= 0 && w < opts.length ? w : -1;
    else if (by === "value") hit = opts.findIndex((o) => o.value === w);
    else hit = opts.findIndex((o) => norm(o.label) === norm(w));
    if (hit < 0) missing.push(w);
    else if (!indexes.includes(hit)) indexes.push(hit);
  }
  const disabled = indexes.filter((i) => opts[i].disabled || (opts[i].parentElement && opts[i].parentElement.tagName === "OPTGROUP" && opts[i].parentElement.disabled));
  return {
    indexes,
    missing,
    disabled: disabled.map((i) => show(opts[i])),
    sample: missing.length ? opts.slice(0, sampleCap).map(show) : [],
    total: opts.length,
  };
}`;

/** Selects exactly the given options, then fires input and change as a user's choice does. */
const APPLY_OPTIONS = `function(indexes) {
  const opts = [...this.options];
  if (this.multiple) for (const o of opts) o.selected = indexes.includes(o.index);
  else this.selectedIndex = indexes[0];
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`;

const READ_SELECTED = `function(textCap) {
  return [...this.selectedOptions].map((o) => ({
    index: o.index,
    value: o.value.slice(0, textCap),
    label: o.label.replace(/\\s+/g, " ").trim().slice(0, textCap),
  }));
}`;

const READBACK_GROUP = "krometrail-readback";

/** Calls a function on a node by backend id after the action (its earlier handle may be released). */
async function readBack(
  page: PageTarget,
  backendNodeId: number,
  functionDeclaration: string,
  args: unknown[] = [],
): Promise<unknown> {
  try {
    const { object } = await page.send("DOM.resolveNode", { backendNodeId, objectGroup: READBACK_GROUP });
    if (!object.objectId) return undefined;
    const { result } = await page.send("Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
    });
    return result.value;
  } catch {
    return undefined;
  } finally {
    page.send("Runtime.releaseObjectGroup", { objectGroup: READBACK_GROUP }).catch(() => {});
  }
}

/** Chooses options of a native <select> by value, label or index (several for a multi-select). */
export async function selectOption(
  env: ActionEnv,
  spec: TargetSpec,
  choice: OptionChoice,
  pageId?: string,
): Promise<Observation> {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  const target = elementOnly(await resolveTarget(env.session, spec, page.id), "select_option", "<select>");
  const kind = (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: SELECT_KIND,
    returnByValue: true,
  })).result.value as {
    tag: string;
    type?: string;
    list: boolean;
    role: string | null;
    multiple: boolean;
    disabled: boolean;
    options: number;
  };
  if (kind.tag !== "select") {
    const described = (await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: describeElementSource,
      returnByValue: true,
    })).result.value;
    const custom = kind.role === "combobox" || kind.role === "listbox";
    throw new ToolError({
      code: "not_a_select",
      message: `select_option works on native <select> elements; the target is ${
        String(described).slice(0, 120)
      }.`,
      retry: "never",
      recovery: kind.list
        ? "This is a text input with a datalist: use fill with the option's text."
        : kind.type === "checkbox" || kind.type === "radio"
        ? "Use click to change a checkbox or radio button."
        : custom
        ? "This is a custom listbox: click it to open the list, then click the option (role option) by ref."
        : "Target the <select> itself (role combobox or listbox in snapshot_page); for a custom dropdown, click to open it, then click the option.",
      affected: { page_id: page.id, ref: target.ref },
    });
  }
  if (kind.disabled) {
    throw new ToolError({
      code: "not_editable",
      message: "The <select> is disabled.",
      retry: "after_recovery",
      recovery: "Wait until the field is enabled (or enable it through the page's own flow), then retry.",
      affected: { page_id: page.id, ref: target.ref },
    });
  }
  if (choice.values.length > 1 && !kind.multiple) {
    throw new ToolError({
      code: "invalid_arguments",
      message: `This <select> takes one option, but ${choice.values.length} were given.`,
      retry: "never",
      recovery: `Pass a single ${choice.by}; only <select multiple> accepts several.`,
      affected: { argument: choice.by, ref: target.ref },
    });
  }
  const match = (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: MATCH_OPTIONS,
    arguments: [
      { value: choice.by },
      { value: choice.values },
      { value: OPTION_SAMPLE },
      { value: OPTION_TEXT_CAP },
    ],
    returnByValue: true,
  })).result.value as {
    indexes: number[];
    missing: Array<string | number>;
    disabled: Array<Record<string, unknown>>;
    sample: Array<Record<string, unknown>>;
    total: number;
  };
  if (match.missing.length > 0) {
    const shown = match.missing.slice(0, 5).map((m) =>
      JSON.stringify(typeof m === "string" ? m.slice(0, 60) : m)
    );
    throw new ToolError({
      code: "option_not_found",
      message: `No option with ${choice.by} ${shown.join(", ")} in this <select> (${match.total} options).`,
      retry: "never",
      recovery: `Choose from details.available_options (by value, label or 0-based index)${
        match.total > match.sample.length
          ? "; the list is a sample, snapshot_page expanded shows the rest"
          : ""
      }.`,
      affected: { page_id: page.id, ref: target.ref, argument: choice.by },
      details: {
        by: choice.by,
        missing: match.missing.slice(0, 5),
        available_options: match.sample,
        total_options: match.total,
        omitted_options: Math.max(0, match.total - match.sample.length),
      },
    });
  }
  if (match.disabled.length > 0) {
    throw new ToolError({
      code: "option_disabled",
      message: `The option ${JSON.stringify(match.disabled[0].label)} is disabled and cannot be chosen.`,
      retry: "after_recovery",
      recovery: "Choose an enabled option, or wait until the page enables it.",
      affected: { page_id: page.id, ref: target.ref, argument: choice.by },
      details: { disabled_options: match.disabled },
    });
  }
  const shownTarget = { ref: target.ref, via: target.via };
  const params = { target: shownTarget, by: choice.by, option_indexes: match.indexes };
  const observation = await interact(env, page, "select_option", params, async () => {
    await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(() => {});
    await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: APPLY_OPTIONS,
      arguments: [{ value: match.indexes }],
    });
  }, startedMs);
  observation.structured.target = shownTarget;
  if (!page.dialog) {
    // The interaction released the targeting handles; read back through a fresh one.
    const selected = await readBack(page, target.backendNodeId, READ_SELECTED, [OPTION_TEXT_CAP]) as
      | Array<{ index: number; value: string; label: string }>
      | undefined;
    if (selected) {
      observation.structured.selected = selected;
      addLine(
        observation,
        `selected: ${selected.map((o) => JSON.stringify(o.label)).join(", ") || "(none)"}`,
      );
      const got = selected.map((o) => o.index).sort((a, b) => a - b).join(",");
      if (got !== [...match.indexes].sort((a, b) => a - b).join(",")) {
        warn(observation, "selection_differs: the page changed the selection after the choice (script)");
      }
    }
  }
  return observation;
}

// -------------------------------------------------------------------------------------- upload_files

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
      : "Pass an existing, readable regular file (absolute paths are clearest; relative ones resolve against the server's working directory).",
    affected: { argument: `paths.${index}` },
    details: { index, problem },
  });
}

/**
 * The spec's upload path authority: each path is canonicalized (symlinks resolved) and must be a
 * regular readable file. There is no containment root: the caller holds the operator's authority.
 */
export async function canonicalUploadPaths(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const [i, given] of paths.entries()) {
    let real: string;
    try {
      real = await Deno.realPath(given);
    } catch (err) {
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
        warn(
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
