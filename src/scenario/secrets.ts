/**
 * Secrets: ids bound to environment variables, resolved when a scenario runs, and redacted back to
 * `${secret:ID}` everywhere durable. A declared secret is redacted whatever its length, so a very short
 * value (say "1" or "ab") also replaces every matching piece of ordinary text: declare short secrets
 * only when that over-redaction is acceptable.
 */
import { ToolError } from "../errors.ts";
import { composeUrl, secretReference, type UrlSpec, type Value } from "./schema_values.ts";

export interface SecretDeclaration {
  secret_id: string;
  environment_variable: string;
}

export interface ResolvedSecret {
  id: string;
  variable: string;
  value: string;
}

/** Reads every declared secret from the environment; a missing or empty variable fails the run. */
export function resolveSecrets(
  decls: readonly SecretDeclaration[],
  env: (name: string) => string | undefined,
): ResolvedSecret[] {
  return decls.map((d) => {
    const value = env(d.environment_variable);
    if (value === undefined || value === "") {
      throw new ToolError({
        code: "secret_unavailable",
        message:
          `Secret ${d.secret_id} is bound to environment variable ${d.environment_variable}, which is ${
            value === undefined ? "not set" : "empty"
          } in the server's environment.`,
        retry: "after_recovery",
        recovery:
          `Set ${d.environment_variable} in the environment of the krometrail server (or the CLI) and run the scenario again; nothing was run.`,
        details: { secret_id: d.secret_id, environment_variable: d.environment_variable },
      });
    }
    return { id: d.secret_id, variable: d.environment_variable, value };
  });
}

function lookup(id: string, secrets: readonly ResolvedSecret[]): string {
  const found = secrets.find((s) => s.id === id);
  if (!found) {
    throw new ToolError({
      code: "undeclared_secret",
      message: `Secret ${id} is referenced but was not resolved.`,
      retry: "never",
      recovery: `Declare ${id} in secrets with the environment variable that holds it.`,
      details: { secret_id: id },
    });
  }
  return found.value;
}

/** The live value: a literal as written, a secret from its resolved variable. */
export function resolveValue(v: Value, secrets: readonly ResolvedSecret[]): string {
  return v.source === "literal" ? v.value : lookup(v.secret_id, secrets);
}

/** The URL to load: the spec's own query, then its entries appended in order (URLSearchParams encoding). */
export function resolveUrl(spec: UrlSpec, secrets: readonly ResolvedSecret[]): string {
  return composeUrl(spec, (v) => resolveValue(v, secrets));
}

/** The URL as durable output writes it: secret query values as `${secret:ID}`, never userinfo. */
export function durableUrl(spec: UrlSpec): string {
  const href = composeUrl(
    spec,
    (v) => v.source === "literal" ? v.value : { verbatim: secretReference(v.secret_id) },
  );
  const url = new URL(href);
  url.username = "";
  url.password = "";
  return url.href;
}

/** Durable form of a value: a literal as written, a secret as its reference. */
export function durableValue(v: Value): string {
  return v.source === "literal" ? v.value : secretReference(v.secret_id);
}

interface Form {
  text: string;
  id: string;
}

function jsonEscaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** JSON escaping as serializers that write non-ASCII and "/" escaped produce it. */
function jsonAsciiEscaped(value: string): string {
  const escaped = jsonEscaped(value).replaceAll("/", "\\/");
  let out = "";
  // Per UTF-16 unit: a character beyond the BMP is written as its two surrogate escapes, as JSON does.
  for (let k = 0; k < escaped.length; k++) {
    const unit = escaped.charCodeAt(k);
    out += unit > 0x7e ? `\\u${unit.toString(16).padStart(4, "0")}` : escaped[k];
  }
  return out;
}

function formEncoded(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** An existing reference is matched first and kept, so redacting twice changes nothing. */
const REFERENCE = String.raw`\$\{secret:[A-Za-z][A-Za-z0-9._-]{0,63}\}`;

interface Matcher {
  re: RegExp | undefined;
  byText: Map<string, string>;
}

/** One regular expression over every form, longest first, so an overlapping shorter secret never splits a longer one. */
function matcher(forms: readonly Form[]): Matcher {
  const byText = new Map<string, string>();
  const sorted = [...forms].filter((f) => f.text !== "").sort((a, b) =>
    b.text.length - a.text.length || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)
  );
  for (const f of sorted) if (!byText.has(f.text)) byText.set(f.text, f.id);
  if (byText.size === 0) return { re: undefined, byText };
  return { re: new RegExp([REFERENCE, ...[...byText.keys()].map(escapeRegExp)].join("|"), "g"), byText };
}

/** Replaces declared secret values in anything durable with their `${secret:ID}` references. */
export class SecretRedactor {
  readonly #text: Matcher;
  readonly #json: Matcher;
  readonly #whole: Map<string, string>;

  constructor(secrets: readonly ResolvedSecret[]) {
    const text: Form[] = [];
    const json: Form[] = [];
    for (const s of secrets) {
      if (s.value === "") continue;
      const encoded = [encodeURIComponent(s.value), formEncoded(s.value)];
      const escaped = [jsonEscaped(s.value), jsonAsciiEscaped(s.value)];
      for (const t of [s.value, ...encoded, ...escaped]) text.push({ text: t, id: s.id });
      // In a JSON text a raw form that differs from its escaped one cannot occur inside a string, and
      // replacing it could cut through the document's structure; the encoded forms are JSON-safe.
      for (const t of [...escaped, ...encoded]) json.push({ text: t, id: s.id });
    }
    this.#text = matcher(text);
    this.#json = matcher(json);
    this.#whole = this.#text.byText;
  }

  /** Plain text: every occurrence of a value, or its URL-encoded or JSON-escaped form. */
  text(s: string): string {
    return replace(s, this.#text);
  }

  /** A JSON text: the JSON-escaped (and URL-encoded) forms, keeping the document valid JSON. */
  json(s: string): string {
    return replace(s, this.#json);
  }

  /** Every string (and object key) of a JSON-like value; other values are returned as they are. */
  deep<T>(v: T): T {
    return this.#deep(v) as T;
  }

  /** Whether any form of any secret occurs in `s`. */
  has(s: string): boolean {
    const { re, byText } = this.#text;
    if (!re) return false;
    for (const m of s.matchAll(re)) if (byText.has(m[0])) return true;
    return false;
  }

  /** The secret id when the whole of `value` is a secret (or one of its encoded or escaped forms). */
  isSecret(value: string): string | undefined {
    return this.#whole.get(value);
  }

  #deep(v: unknown): unknown {
    if (typeof v === "string") return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.#deep(x));
    if (v && typeof v === "object" && isPlain(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.text(k), this.#deep(x)]));
    }
    return v;
  }
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function replace(s: string, m: Matcher): string {
  if (!m.re) return s;
  return s.replace(m.re, (found) => {
    const id = m.byText.get(found);
    return id === undefined ? found : secretReference(id);
  });
}
