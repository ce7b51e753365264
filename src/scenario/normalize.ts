/**
 * The comparison's normalization: canonical JSON, SHA-256 digests, the built-in rules, the caller's
 * exact-literal rules and the commitment that records both. Pure: no browser, no I/O.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ToolError } from "../errors.ts";

export const NORMALIZATION_SCHEMA = "krometrail.scenario.normalization/1";

/** Artifact kinds a caller rule may name. Screenshots are compared by content digest, never rewritten. */
export const NORMALIZABLE_KINDS = [
  "action_state",
  "dom",
  "accessibility",
  "url",
  "history",
  "storage",
  "events",
] as const;
export type NormalizableKind = typeof NORMALIZABLE_KINDS[number];

/** Every built-in rule, by name, in the order the commitment lists them. */
export const BUILT_IN_RULES = [
  "ignore_step_elapsed_ms",
  "ignore_step_session_times",
  "ignore_event_sequence",
  "ignore_event_step_index",
  "ignore_event_session_time",
  "ignore_interaction_ids",
  "ignore_request_ids",
  "relative_to_start_url",
  "compare_screenshot_content_digest",
  "compare_normalized_text_content",
  "compare_step_events_unordered",
] as const;
export type BuiltInRule = typeof BUILT_IN_RULES[number];

/** The token each capture's own start_url becomes in url, history and event strings. */
export const START_URL_TOKEN = "<start_url>";

export const RULE_LIMITS = { rules: 32, rule_id: 64, artifacts: 8, match: 1000, replacement: 1000 } as const;

function tooLong(field: string, limit: number) {
  return {
    error: (issue: { input?: unknown }) =>
      `${field} is ${
        typeof issue.input === "string" ? issue.input.length : "?"
      } characters, over the limit of ${limit}`,
  };
}

export const normalizationRuleSchema = z.strictObject({
  rule_id: z.string().min(1, "rule_id must not be empty").max(RULE_LIMITS.rule_id, tooLong("rule_id", 64)),
  artifacts: z.array(z.enum(NORMALIZABLE_KINDS))
    .min(1, "artifacts must name at least one artifact kind")
    .max(RULE_LIMITS.artifacts, {
      error: (issue) =>
        `artifacts has ${
          Array.isArray(issue.input) ? issue.input.length : "?"
        } entries, over the limit of ${RULE_LIMITS.artifacts}`,
    })
    .refine((kinds) => new Set(kinds).size === kinds.length, "artifacts must not repeat a kind"),
  /** An exact literal: every occurrence is replaced; it is never a pattern. */
  match: z.string().min(1, "match must not be empty").max(RULE_LIMITS.match, tooLong("match", 1000)),
  replacement: z.string().max(RULE_LIMITS.replacement, tooLong("replacement", 1000)),
});
export type NormalizationRule = z.infer<typeof normalizationRuleSchema>;

export const normalizationRulesSchema = z.array(normalizationRuleSchema)
  .max(RULE_LIMITS.rules, {
    error: (issue) =>
      `${
        Array.isArray(issue.input) ? issue.input.length : "?"
      } normalization rules, over the limit of ${RULE_LIMITS.rules}`,
  })
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((rule, index) => {
      if (seen.has(rule.rule_id)) {
        ctx.addIssue({
          code: "custom",
          path: [index, "rule_id"],
          message: `rule_id "${rule.rule_id}" is used by more than one rule`,
        });
      }
      seen.add(rule.rule_id);
    });
  });

/** Validates caller rules, failing as `invalid_normalization_rules` naming the path. */
export function parseNormalizationRules(value: unknown): NormalizationRule[] {
  const parsed = normalizationRulesSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue ? ["rules", ...issue.path.map(String)].join(".") : "rules";
  return invalidRules(path, issue?.message ?? "unreadable");
}

function invalidRules(path: string, problem: string): never {
  throw new ToolError({
    code: "invalid_normalization_rules",
    message: `Invalid normalization rules: ${path}: ${problem}.`,
    retry: "never",
    recovery:
      `Give at most ${RULE_LIMITS.rules} rules with unique rule_id, 1-${RULE_LIMITS.artifacts} distinct artifact kinds ` +
      `(${NORMALIZABLE_KINDS.join(", ")}), a non-empty literal match and a replacement of at most ` +
      `${RULE_LIMITS.replacement} characters.`,
    affected: { argument: path },
    details: { path, problem },
  });
}

/** Orders by Unicode code point (String#< compares UTF-16 code units, which differs past U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * At the first differing code unit, surrogates (U+D800..DFFF, code points past U+FFFF) must rank above
 * U+E000..FFFF: shifting the two ranges past each other gives code point order without decoding.
 */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/**
 * Canonical JSON: object keys sorted by code point, no whitespace, arrays in order. Undefined object
 * members are left out (as JSON.stringify does); values JSON cannot represent are refused rather than
 * silently changed, since the result is digested.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not a JSON number`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) {
        return `[${
          value.map((item) => {
            if (item === undefined) throw new TypeError("canonicalJson: an array holds undefined");
            return canonicalJson(item);
          }).join(",")
        }]`;
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort(compareCodePoints);
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} is not JSON`);
  }
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

export function digestCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Rules by rule_id, each rule's artifacts by name: the one order they are applied and committed in. */
export function canonicalRules(rules: readonly NormalizationRule[]): NormalizationRule[] {
  return rules
    .map((rule) => ({
      rule_id: rule.rule_id,
      artifacts: [...rule.artifacts].sort(compareCodePoints),
      match: rule.match,
      replacement: rule.replacement,
    }))
    .sort((a, b) => compareCodePoints(a.rule_id, b.rule_id));
}

export interface NormalizationCommitment {
  built_in_rules: BuiltInRule[];
  rules: NormalizationRule[];
  /** SHA-256 of the canonical JSON of {schema, built_in_rules, rules}. */
  sha256: string;
}

export function commitNormalization(rules: readonly NormalizationRule[]): NormalizationCommitment {
  const built_in_rules = [...BUILT_IN_RULES];
  const ordered = canonicalRules(rules);
  const sha256 = digestCanonical({ schema: NORMALIZATION_SCHEMA, built_in_rules, rules: ordered });
  return { built_in_rules, rules: ordered, sha256 };
}

/** Rewrites every string value (not keys) in a JSON value. */
export function mapStrings(value: unknown, rewrite: (s: string) => string): unknown {
  if (typeof value === "string") return rewrite(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, rewrite));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, rewrite);
    return out;
  }
  return value;
}

/** The caller rules naming `kind`, applied in canonical (rule_id) order; `rules` must be canonical. */
export function applyCallerRules(
  value: unknown,
  kind: NormalizableKind,
  rules: readonly NormalizationRule[],
): unknown {
  const applicable = rules.filter((rule) => rule.artifacts.includes(kind));
  if (applicable.length === 0) return value;
  return mapStrings(
    value,
    (s) => applicable.reduce((acc, rule) => acc.split(rule.match).join(rule.replacement), s),
  );
}

/**
 * Characters that end a URL written inside a string (besides the string's end): a fragment, whitespace,
 * quotes and angle brackets, and the `:line:column` a stack frame appends.
 */
const URL_END = /[#:\s"'<>`]/;

/**
 * relative_to_start_url: each occurrence of the capture's own start_url (or its parsed href, which may
 * add a trailing slash) that is a whole URL becomes START_URL_TOKEN. An occurrence continued by more of a
 * URL (`http://h/` in `http://h/page`) is left alone: otherwise runs from `http://h/` and from
 * `http://h/?bug=1` would write the same page differently.
 */
export function relativeToStartUrl(value: unknown, startUrl: string): unknown {
  const forms = new Set<string>();
  if (startUrl !== "") forms.add(startUrl);
  try {
    forms.add(new URL(startUrl).href);
  } catch {
    // Not a URL: the literal form alone.
  }
  // Longest first, so a shorter form never splits an occurrence of the longer one.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return value;
  return mapStrings(value, (s) => ordered.reduce((acc, form) => replaceWholeUrl(acc, form), s));
}

function replaceWholeUrl(s: string, url: string): string {
  let out = "";
  let from = 0;
  for (let at = s.indexOf(url); at !== -1; at = s.indexOf(url, at + url.length)) {
    const next = s.charAt(at + url.length);
    if (next !== "" && !URL_END.test(next)) continue;
    out += s.slice(from, at) + START_URL_TOKEN;
    from = at + url.length;
  }
  return from === 0 ? s : out + s.slice(from);
}

/**
 * compare_normalized_text_content: line endings as \n, trailing whitespace trimmed per line, runs of
 * blank lines collapsed to one, leading and trailing blank lines dropped.
 */
export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[^\S\n]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^\n+/, "")
    .replace(/\n+$/, "");
}

/** Event fields every run numbers afresh: ignore_event_sequence / _step_index / _session_time. */
const EVENT_VOLATILE_FIELDS = new Set(["sequence", "step_index", "time_ms"]);

/**
 * Identifier fields an event may carry that the scenario request declared (stable across runs). Every
 * other `id`, `guid` or `*_id` field (request_id, frame_id, loader_id, target_id, page_id, worker_id,
 * interaction_id, ...) is assigned by the browser or the session and differs per run: ignore_request_ids
 * and ignore_interaction_ids drop them.
 */
export const DECLARED_ID_FIELDS: ReadonlySet<string> = new Set([
  "step_id",
  "route_id",
  "secret_id",
  "rule_id",
]);

export function isPerRunIdField(name: string): boolean {
  if (DECLARED_ID_FIELDS.has(name)) return false;
  return name === "id" || name === "guid" || name.endsWith("_id") || name.endsWith("_guid");
}

/** An event without its per-run fields (sequence, step index, session time, per-run identifiers). */
export function eventWithoutVolatiles(event: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(event)) {
    if (EVENT_VOLATILE_FIELDS.has(key) || isPerRunIdField(key)) continue;
    out[key] = item;
  }
  return out;
}

/**
 * compare_step_events_unordered: a step's normalized events sorted by their canonical JSON, so two runs
 * whose concurrent requests finished in another order compare equal; what happened, and how often, still
 * counts.
 */
export function sortCanonically(values: readonly unknown[]): unknown[] {
  return values
    .map((value) => ({ value, key: canonicalJson(value) }))
    .sort((a, b) => compareCodePoints(a.key, b.key))
    .map(({ value }) => value);
}
