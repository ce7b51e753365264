/**
 * The viewer's gate, pure: every request is judged from its method, path and headers before any
 * route runs. A per-process token in the path (an unguessable URL is the capability), a Host check
 * against DNS rebinding (a foreign name resolving to 127.0.0.1 still sends its own Host), an Origin
 * check against other sites' pages, and JSON-only POSTs (a form or a no-cors fetch cannot send
 * application/json without a preflight, and we never answer preflights).
 */

export interface Refusal {
  status: number;
  code: string;
  message: string;
}

export interface GateInput {
  method: string;
  /** The request path, e.g. /<token>/api/sessions. */
  path: string;
  host: string | null;
  origin: string | null;
  contentType: string | null;
}

export type GateResult = { ok: true; rest: string } | { ok: false; refusal: Refusal };

/** 32 random bytes as base64url: the secret every viewer URL carries. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Compares in time independent of where the strings differ (length is not secret: it is fixed). */
export function constantTimeEqual(a: string, b: string): boolean {
  const enc = new TextEncoder();
  const x = enc.encode(a);
  const y = enc.encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** The Host values that name this viewer: loopback by address or by localhost, on its own port. */
export function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

/** Origins the viewer's own page can send (the browser sends the origin the page was loaded from). */
export function allowedOrigins(port: number): string[] {
  return allowedHosts(port).map((h) => `http://${h}`);
}

function refuse(status: number, code: string, message: string): GateResult {
  return { ok: false, refusal: { status, code, message } };
}

/**
 * Judges one request. On success `rest` is the path after `/<token>`: "/" for the entry, "" for the
 * token without its slash (the server redirects it, or the page's relative URLs would lose the token).
 * The checks run in this order so a rebinding page learns nothing (not even whether its token guess
 * was right). HEAD is refused under api/: a HEAD runs the GET handler, and no API caller needs one.
 */
export function gate(req: GateInput, token: string, port: number): GateResult {
  const host = (req.host ?? "").toLowerCase();
  if (!allowedHosts(port).includes(host)) {
    return refuse(
      403,
      "viewer_host_refused",
      "This viewer answers only to 127.0.0.1, localhost or [::1] on its port.",
    );
  }
  if (req.origin !== null && !allowedOrigins(port).includes(req.origin.toLowerCase())) {
    return refuse(403, "viewer_origin_refused", "Requests from other origins are refused.");
  }
  const match = /^\/([A-Za-z0-9_-]{1,128})(\/.*)?$/.exec(req.path);
  if (!match || !constantTimeEqual(match[1], token)) {
    return refuse(
      403,
      "viewer_token_required",
      "Open the viewer by the URL open_viewer or `krometrail view` printed.",
    );
  }
  const rest = match[2] ?? "";
  const method = req.method.toUpperCase();
  if (method === "HEAD" && rest.startsWith("/api/")) {
    return refuse(405, "viewer_method_refused", "HEAD is not served under api/; use GET.");
  }
  if (method === "POST") {
    if (req.origin === null) {
      return refuse(403, "viewer_origin_required", "A POST must carry this viewer's Origin.");
    }
    const type = (req.contentType ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") {
      return refuse(403, "viewer_json_required", "A POST must be Content-Type: application/json.");
    }
  } else if (method !== "GET" && method !== "HEAD") {
    return refuse(405, "viewer_method_refused", "Only GET and POST are served.");
  }
  return { ok: true, rest };
}

/** The headers every response carries, refusals included. No CORS header, ever. */
export function securityHeaders(): Record<string, string> {
  return {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-resource-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "content-security-policy": "default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; " +
      "style-src 'self'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
      "form-action 'none'; frame-ancestors 'none'",
  };
}
