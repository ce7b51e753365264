/**
 * The text side of source maps, pure: finding a script's map reference, decoding an inline map,
 * locating an inline script block in its document, a map source's stored name, and a capped body read.
 */

import { sanitizeText } from "./privacy.ts";

/** The last `//# sourceMappingURL=` (or the old `//@`) in a script's tail; CSS-style `/*#` too. */
export function findSourceMappingUrl(script: string): string | null {
  const tail = script.slice(-4096);
  const re = /(?:\/\/|\/\*)[#@][ \t]*sourceMappingURL=([^\s'"*]+)/g;
  let found: string | null = null;
  for (const m of tail.matchAll(re)) found = m[1];
  return found;
}

/** The JSON text of a `data:application/json[;charset=…][;base64],…` map, or null. */
export function decodeDataMap(url: string): string | null {
  const m = /^data:([^,]*),(.*)$/s.exec(url);
  if (!m) return null;
  const meta = m[1].toLowerCase();
  if (!meta.startsWith("application/json") && meta !== "" && !meta.startsWith("text/plain")) return null;
  try {
    if (meta.split(";").includes("base64")) {
      return new TextDecoder().decode(Uint8Array.fromBase64(m[2]));
    }
    return decodeURIComponent(m[2]);
  } catch {
    return null;
  }
}

/**
 * A map's source name as it may be stored: scheme and host dropped (`webpack:///src/a.ts`,
 * `http://127.0.0.1:5173/src/a.ts` → `src/a.ts`), an absolute file path cut to its last three parts
 * (relative, so no home directory), then the text sanitizer.
 */
export function storedSource(source: string): string {
  let s = source.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").replace(/^(?:\.\/)+/, "");
  if (/^(?:\/|[A-Za-z]:[\\/])/.test(s)) {
    const parts = s.split(/[\\/]/).filter((p) => p !== "");
    s = parts.slice(-3).join("/");
  }
  return sanitizeText(s, 200).text;
}

/**
 * The inline `<script>` block (no src) of an HTML document that holds a 0-based document position,
 * with where its text starts. V8 reports inline-script positions in document coordinates.
 */
export function inlineScriptAt(
  html: string,
  line0: number,
  column0: number,
): { text: string; line0: number; column0: number } | null {
  const open = /<script\b([^>]*)>/gi;
  const lower = html.toLowerCase();
  let line = 0;
  let counted = 0;
  const lineAt = (index: number) => {
    for (let i = html.indexOf("\n", counted); i !== -1 && i < index; i = html.indexOf("\n", i + 1)) line++;
    counted = index;
    return line;
  };
  for (let m = open.exec(html); m; m = open.exec(html)) {
    const start = m.index + m[0].length;
    const end = lower.indexOf("</script", start);
    const stop = end < 0 ? html.length : end;
    open.lastIndex = stop;
    if (/\bsrc\s*=/i.test(m[1])) continue;
    const startLine = lineAt(start);
    const startColumn = start - (html.lastIndexOf("\n", start - 1) + 1);
    const text = html.slice(start, stop);
    const lines = text.split("\n");
    const endLine = startLine + lines.length - 1;
    const inside = (line0 > startLine || (line0 === startLine && column0 >= startColumn)) && line0 <= endLine;
    if (inside) return { text, line0: startLine, column0: startColumn };
    lineAt(stop);
  }
  return null;
}

/** Reads a response body up to `cap` bytes; null past it. */
export async function cappedText(res: Response, cap: number): Promise<string | null> {
  const length = Number(res.headers.get("content-length") ?? "0");
  if (length > cap) {
    await res.body?.cancel();
    return null;
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > cap) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}
