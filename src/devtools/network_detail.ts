/**
 * One request's detail as get_network_request reports it: the structured result and its compact text
 * block, from the in-memory log entry (network_log.ts). The initiator's stack is source-mapped where a
 * map is reachable on loopback.
 */

import type { Protocol } from "devtools-protocol";
import type { RequestDetail } from "../browser/network_log.ts";
import {
  type HeaderEntry,
  liveUrl,
  redactHeaders,
  type TimingPhases,
  timingPhases,
} from "../browser/network_headers.ts";
import type { BodyFull, BodySummary } from "./body_summary.ts";
import type { CdpFrame, FrameOptions, MappedFrame, SourceMapResolver } from "../browser/source_maps.ts";

export const INITIATOR_FRAMES = 5;

export interface NetworkRequestResult {
  [key: string]: unknown;
  request_id: string;
  page_id: string;
  method: string;
  url: string;
  state: RequestDetail["state"];
  status: number | null;
  status_text: string | null;
  protocol: string | null;
  remote_address: string | null;
  resource_type: string;
  mime_type: string | null;
  timing: TimingPhases | null;
  sizes: {
    /** Bytes on the wire, headers included (null until finished). */
    transfer_bytes: number | null;
    /** Response headers' bytes. */
    headers_bytes: number | null;
    /** Body bytes on the wire (compressed). */
    encoded_body_bytes: number | null;
    /** Body bytes after decoding. */
    decoded_body_bytes: number;
  };
  cache: { memory: boolean; disk: boolean; prefetch: boolean; service_worker: boolean };
  failure: RequestDetail["failure"] | null;
  redirects: RequestDetail["redirects"];
  initiator: {
    type: string;
    url: string | null;
    line: number | null;
    column: number | null;
    stack: MappedFrame[];
  };
  request_headers: HeaderEntry[];
  response_headers: HeaderEntry[];
  redacted_headers: string[];
  body?: BodySummary | BodyFull;
}

/** Call frames of a stack and its async parents, newest first, up to `max`. */
export function stackFrames(stack: Protocol.Runtime.StackTrace | undefined, max: number): CdpFrame[] {
  const out: CdpFrame[] = [];
  for (let s = stack; s && out.length < max; s = s.parent) {
    out.push(...s.callFrames.slice(0, max - out.length));
  }
  return out;
}

export async function describeRequest(
  e: RequestDetail,
  showQuery: boolean,
  resolver: SourceMapResolver,
  document?: FrameOptions["document"],
): Promise<NetworkRequestResult> {
  const r = e.response;
  // URL-valued headers (:path, Referer, Location, …) follow the URL's query setting.
  const requestHeaders = redactHeaders(e.sent_headers ?? e.headers, showQuery);
  const responseHeaders = redactHeaders(e.received_headers ?? r?.headers, showQuery);
  const headersBytes = e.received_headers_text_bytes ?? (r ? r.encoded_at_response : null);
  const transfer = e.encoded_bytes ?? null;
  const present = (u: string) => (u ? liveUrl(u, showQuery) : "");
  const stack = await resolver.frames(
    stackFrames(e.initiator.stack, INITIATOR_FRAMES),
    INITIATOR_FRAMES,
    present,
    { document },
  );
  const top = e.initiator.stack?.callFrames[0];
  const initUrl = e.initiator.url ?? top?.url;
  const initLine = e.initiator.lineNumber ?? top?.lineNumber;
  const initColumn = e.initiator.columnNumber ?? top?.columnNumber;
  return {
    request_id: e.request_id,
    page_id: e.page_id,
    method: e.method,
    url: liveUrl(e.url, showQuery),
    state: e.state,
    status: r?.status ?? null,
    status_text: r?.status_text ?? null,
    protocol: r?.protocol ?? null,
    remote_address: r?.remote_ip
      ? `${r.remote_ip}${r.remote_port !== undefined ? `:${r.remote_port}` : ""}`
      : null,
    resource_type: e.resource_type,
    mime_type: r?.mime_type ?? null,
    timing: r || e.ended !== undefined ? timingPhases(e.issued, r?.timing, e.ended) : null,
    sizes: {
      transfer_bytes: transfer,
      headers_bytes: headersBytes,
      encoded_body_bytes: transfer !== null && headersBytes !== null
        ? Math.max(0, transfer - headersBytes)
        : null,
      decoded_body_bytes: e.data_bytes,
    },
    cache: {
      memory: e.from_memory_cache,
      disk: r?.from_disk_cache ?? false,
      prefetch: r?.from_prefetch_cache ?? false,
      service_worker: r?.from_service_worker ?? false,
    },
    failure: e.failure ?? null,
    redirects: e.redirects.map((h) => ({ url: liveUrl(h.url, showQuery), status: h.status })),
    initiator: {
      type: e.initiator.type,
      url: initUrl ? present(initUrl) : null,
      line: initLine !== undefined ? initLine + 1 : null,
      column: initColumn !== undefined ? initColumn + 1 : null,
      stack,
    },
    request_headers: requestHeaders.headers,
    response_headers: responseHeaders.headers,
    redacted_headers: [...new Set([...requestHeaders.redacted, ...responseHeaders.redacted])],
    ...(requestHeaders.omitted + responseHeaders.omitted > 0
      ? { omitted_headers: requestHeaders.omitted + responseHeaders.omitted }
      : {}),
  };
}

/** A frame's script by its last path segment: the initiator line above already names the whole URL. */
function scriptName(url: string): string {
  const path = url.split(/[?#]/)[0];
  return path.slice(path.lastIndexOf("/") + 1) || url;
}

function frameLine(f: MappedFrame): string {
  const at = `${f.function} ${scriptName(f.url)}:${f.line}:${f.column}`;
  const o = f.original;
  return o ? `${at} ← ${o.source}:${o.line}:${o.column}${o.name ? ` (${o.name})` : ""}` : at;
}

function headerNames(list: HeaderEntry[]): string {
  return list.map((h) => (h.value.startsWith("<redacted: ") ? `${h.name} ${h.value}` : h.name)).join(", ") ||
    "none";
}

/** The compact text block: one line per concern. */
export function requestText(d: NetworkRequestResult): string {
  const t = d.timing;
  const cached = Object.entries(d.cache).filter(([, v]) => v).map(([k]) => k);
  const lines = [
    `${d.request_id} ${d.method} ${d.url} → ${d.status ?? d.state}${
      d.status_text ? ` ${d.status_text}` : ""
    }` +
    ` ${d.protocol ?? ""} ${d.resource_type}${d.mime_type ? ` ${d.mime_type}` : ""}` +
    `${d.remote_address ? ` from ${d.remote_address}` : ""} (${d.page_id})`,
  ];
  if (d.failure) lines.push(`failed: ${d.failure.error}${d.failure.canceled ? " (canceled)" : ""}`);
  if (t) {
    // Phases that did not happen (a reused connection has no dns or connect) are left out.
    const phases = (["queued", "blocked", "dns", "connect", "ssl", "send", "wait", "receive"] as const)
      .map((k) => [k, t[`${k}_ms`]] as const)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => `${k} ${v}`);
    lines.push(`timing ms: total ${t.total_ms ?? "-"}${phases.length ? ` = ${phases.join(", ")}` : ""}`);
  }
  const s = d.sizes;
  lines.push(
    `size: transfer ${s.transfer_bytes ?? "-"} B (headers ${
      s.headers_bytes ?? "-"
    }), body ${s.decoded_body_bytes} B` +
      (cached.length ? `; cache: ${cached.join(", ")}` : ""),
  );
  for (const h of d.redirects) lines.push(`redirected from ${h.url} (${h.status})`);
  const i = d.initiator;
  lines.push(
    `initiator: ${i.type}${i.url ? ` ${i.url}${i.line !== null ? `:${i.line}:${i.column}` : ""}` : ""}`,
  );
  for (const f of i.stack) lines.push(`  at ${frameLine(f)}`);
  lines.push(`request headers: ${headerNames(d.request_headers)}`);
  lines.push(`response headers: ${headerNames(d.response_headers)}`);
  const b = d.body;
  if (b?.mode === "summary") lines.push(`body: ${b.summary}`);
  else if (b?.mode === "full") {
    lines.push(
      `body (${b.encoding}, ${b.bytes} B${b.truncated ? `, truncated to the ${b.cap_chars}-char cap` : ""}):`,
      b.content,
    );
  }
  return lines.join("\n");
}
