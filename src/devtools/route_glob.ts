/**
 * URL globs in Playwright's syntax, matched in full against a request URL, and the wider Chrome Fetch
 * pattern that pauses every URL a glob can match (route_match.ts keeps the routes).
 */
const GLOB_ESCAPE = /[$^+.*()|\\?{}[\]/]/;

/** A literal character of the glob as regex source. */
function literal(c: string): string {
  return GLOB_ESCAPE.test(c) ? `\\${c}` : c;
}

/**
 * Playwright's URL glob as a regular expression over the whole URL: `*` is any run without `/`, `**` any
 * run (`**` between slashes or at an end also zero path segments), `{a,b}` alternatives, `\` escapes;
 * `?` is a literal character. A pattern that starts with `/` is a path on any origin.
 */
export function globRegExp(pattern: string): RegExp {
  const out: string[] = ["^"];
  if (pattern.startsWith("/")) out.push("[a-z][a-z0-9+.-]*://[^/]*");
  let group = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      out.push(literal(pattern[++i]));
      continue;
    }
    if (c === "*") {
      const before = pattern[i - 1];
      let stars = 1;
      while (pattern[i + 1] === "*") {
        stars++;
        i++;
      }
      const after = pattern[i + 1];
      const deep = stars > 1 && (before === undefined || before === "/") &&
        (after === undefined || after === "/");
      if (deep && after === "/") {
        out.push("(?:.*/)?");
        i++;
      } else out.push(deep ? ".*" : "[^/]*");
      continue;
    }
    if (c === "{" && !group) {
      group = true;
      out.push("(?:");
    } else if (c === "}" && group) {
      group = false;
      out.push(")");
    } else if (c === "," && group) out.push("|");
    else out.push(literal(c));
  }
  out.push("$");
  return new RegExp(out.join(""));
}

/**
 * The Fetch.enable urlPattern that pauses at least every URL the glob matches (Chrome's wildcards: `*` any
 * run, `?` one character), so requests no route can match never pause. Every glob construct and every
 * character Chrome would read as a wildcard becomes a wildcard: wider, never narrower.
 */
export function chromeUrlPattern(pattern: string): string {
  let out = pattern.startsWith("/") ? "*" : "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      const next = pattern[++i];
      out += next === "*" || next === "?" || next === "\\" ? "?" : next;
    } else if (c === "*" || c === "{") {
      if (c === "{") { while (i < pattern.length && pattern[i] !== "}") i++; }
      if (!out.endsWith("*")) out += "*";
    } else if (c === "?" || c === "\\") out += "?";
    else out += c;
  }
  return out;
}

const hasGlob = (pattern: string) => /[*{\\]/.test(pattern);

/** A full URL without wildcards is compared in its normalized form (as the browser reports it). */
function normalizedUrl(pattern: string): string | undefined {
  if (hasGlob(pattern) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(pattern)) return undefined;
  try {
    const u = new URL(pattern);
    u.hash = "";
    return u.href;
  } catch {
    return undefined;
  }
}

export interface UrlMatcher {
  test(url: string): boolean;
  /** For Fetch.enable. */
  chrome: string;
}

export function urlMatcher(pattern: string): UrlMatcher {
  const exact = normalizedUrl(pattern);
  if (exact !== undefined) {
    return { test: (url) => url.split("#")[0] === exact, chrome: chromeUrlPattern(exact) };
  }
  const re = globRegExp(pattern);
  return { test: (url) => re.test(url.split("#")[0]), chrome: chromeUrlPattern(pattern) };
}
