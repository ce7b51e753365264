/**
 * The in-memory detail of each session's recent requests, for get_network_request: built from Chrome's
 * Network events (the ExtraInfo ones carry the headers as sent, Cookie included), bounded to the last
 * MAX_REQUESTS per session (least recently used out first) and never written anywhere. The event rows
 * in the index keep only what events.ts puts there; this is what a live diagnosis needs on top.
 */

import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "./session.ts";
import type { PageTarget } from "./targets.ts";
import { liveUrl, type ResourceTimingLike } from "./network_headers.ts";

export const NETWORK_LOG_LIMITS = {
  /** Requests kept per session. */
  max_requests: 1_000,
  /** Ids remembered after they aged out, so a miss can say why. */
  max_aged_ids: 10_000,
} as const;

type Headers = Record<string, string>;

/** Initiator frames kept per request (the tool shows five); the rest of a deep async stack is dropped. */
const KEPT_FRAMES = 8;
/** A longer URL is kept cut (a data: URL can be megabytes; its mime and length are what is shown). */
const KEPT_URL_CHARS = 8 * 1024;

function keptUrl(url: string): string {
  if (/^data:/i.test(url)) return liveUrl(url, false);
  return url.length > KEPT_URL_CHARS ? `${url.slice(0, KEPT_URL_CHARS)}…` : url;
}

/** The initiator without its full async stack chain: its first frames, flattened. */
function keptInitiator(i: Protocol.Network.Initiator): Protocol.Network.Initiator {
  const callFrames: Protocol.Runtime.CallFrame[] = [];
  for (let s = i.stack; s && callFrames.length < KEPT_FRAMES; s = s.parent) {
    callFrames.push(...s.callFrames.slice(0, KEPT_FRAMES - callFrames.length));
  }
  const { stack: _stack, ...rest } = i;
  return callFrames.length ? { ...rest, stack: { callFrames } } : rest;
}

export interface ResponseDetail {
  status: number;
  status_text: string;
  protocol?: string;
  remote_ip?: string;
  remote_port?: number;
  mime_type: string;
  headers: Headers;
  timing?: ResourceTimingLike;
  from_disk_cache: boolean;
  from_service_worker: boolean;
  from_prefetch_cache: boolean;
  /** Bytes received when the headers arrived (their size on the wire, roughly). */
  encoded_at_response: number;
  security_state?: string;
}

export interface RequestDetail {
  request_id: string;
  page_id: string;
  /** Chrome's monotonic seconds at requestWillBeSent. */
  issued: number;
  /** Wall-clock ms at requestWillBeSent. */
  wall_ms: number;
  method: string;
  url: string;
  resource_type: string;
  headers: Headers;
  has_post_data: boolean;
  post_data_bytes?: number;
  initiator: Protocol.Network.Initiator;
  /** Hops before this URL, oldest first. */
  redirects: Array<{ url: string; status: number }>;
  /** requestWillBeSentExtraInfo headers: what went on the wire (Cookie included). */
  sent_headers?: Headers;
  response?: ResponseDetail;
  /** responseReceivedExtraInfo headers: what came off the wire (Set-Cookie included). */
  received_headers?: Headers;
  received_headers_text_bytes?: number;
  from_memory_cache: boolean;
  /** Decoded body bytes received (dataReceived). */
  data_bytes: number;
  /** Total bytes on the wire (loadingFinished), headers included. */
  encoded_bytes?: number;
  /** Chrome's monotonic seconds at loadingFinished/Failed. */
  ended?: number;
  failure?: { error: string; canceled: boolean; blocked_reason?: string; cors_error?: string };
  state: "pending" | "finished" | "failed";
}

export type LookupResult =
  | { found: RequestDetail }
  | { found?: undefined; reason: "aged_out" | "unknown" | "other_page"; page_id?: string };

/** One session's bounded log. */
export class NetworkLog {
  readonly #entries = new Map<string, RequestDetail>();
  readonly #aged = new Set<string>();
  /** ExtraInfo that arrived before its request (Chrome does not order them). */
  readonly #early = new Map<string, { sent?: Headers; received?: Headers; text?: number }>();

  get size(): number {
    return this.#entries.size;
  }

  #key(pageId: string, requestId: string): string {
    return `${pageId} ${requestId}`;
  }

  #find(requestId: string, pageId?: string): RequestDetail | undefined {
    if (pageId !== undefined) return this.#entries.get(this.#key(pageId, requestId));
    let latest: RequestDetail | undefined;
    for (const e of this.#entries.values()) {
      if (e.request_id === requestId && (!latest || e.issued >= latest.issued)) latest = e;
    }
    return latest;
  }

  #touch(e: RequestDetail): void {
    const key = this.#key(e.page_id, e.request_id);
    this.#entries.delete(key);
    this.#entries.set(key, e);
  }

  lookup(requestId: string, pageId?: string): LookupResult {
    const e = this.#find(requestId, pageId);
    if (e) {
      this.#touch(e);
      return { found: e };
    }
    if (pageId !== undefined) {
      const other = this.#find(requestId);
      if (other) return { reason: "other_page", page_id: other.page_id };
    }
    return { reason: this.#aged.has(requestId) ? "aged_out" : "unknown" };
  }

  /** The request id of the page's latest document load of `url` (fragment aside), if still kept. */
  latestDocument(pageId: string, url: string): string | undefined {
    const bare = url.split("#")[0];
    let found: RequestDetail | undefined;
    for (const e of this.#entries.values()) {
      if (e.page_id !== pageId || e.resource_type !== "Document" || e.url.split("#")[0] !== bare) continue;
      if (!found || e.issued >= found.issued) found = e;
    }
    return found?.request_id;
  }

  willBeSent(page: PageTarget, p: Protocol.Network.RequestWillBeSentEvent): void {
    const prior = this.#entries.get(this.#key(page.id, p.requestId));
    if (prior && p.redirectResponse) {
      // A redirect reuses the id: the entry becomes the next hop, remembering the one before.
      prior.redirects.push({ url: prior.url, status: p.redirectResponse.status });
      prior.redirects.splice(0, Math.max(0, prior.redirects.length - 10));
    }
    const early = this.#early.get(p.requestId);
    this.#early.delete(p.requestId);
    const e: RequestDetail = {
      request_id: p.requestId,
      page_id: page.id,
      issued: p.timestamp,
      wall_ms: p.wallTime * 1000,
      method: p.request.method,
      // The fragment stays (a hash route is part of the diagnosis); liveUrl masks one holding parameters.
      url: keptUrl(p.request.url + (p.request.urlFragment ?? "")),
      resource_type: p.type ?? "Other",
      headers: p.request.headers as Headers,
      has_post_data: p.request.hasPostData ?? false,
      post_data_bytes: p.request.postDataEntries?.reduce((n, d) => n + (d.bytes?.length ?? 0), 0),
      initiator: keptInitiator(p.initiator),
      redirects: prior?.redirects ?? [],
      sent_headers: early?.sent,
      received_headers: early?.received,
      received_headers_text_bytes: early?.text,
      from_memory_cache: false,
      data_bytes: 0,
      state: "pending",
    };
    if (prior) e.issued = prior.issued;
    this.#entries.delete(this.#key(page.id, p.requestId));
    this.#entries.set(this.#key(page.id, p.requestId), e);
    this.#aged.delete(p.requestId);
    while (this.#entries.size > NETWORK_LOG_LIMITS.max_requests) {
      const [key, oldest] = this.#entries.entries().next().value ?? [];
      if (key === undefined || !oldest) break;
      this.#entries.delete(key);
      this.#aged.add(oldest.request_id);
    }
    while (this.#aged.size > NETWORK_LOG_LIMITS.max_aged_ids) {
      const first = this.#aged.values().next().value;
      if (first === undefined) break;
      this.#aged.delete(first);
    }
  }

  #earlyFor(requestId: string) {
    let early = this.#early.get(requestId);
    if (!early) {
      early = {};
      this.#early.set(requestId, early);
      // Extra info for requests we never see (workers, preflights) must not pile up.
      if (this.#early.size > 200) {
        const first = this.#early.keys().next().value;
        if (first !== undefined) this.#early.delete(first);
      }
    }
    return early;
  }

  sentExtra(page: PageTarget, p: Protocol.Network.RequestWillBeSentExtraInfoEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    // Chrome does not order ExtraInfo: it can come after the response (seen under load), so the entry takes
    // it whenever it has none yet. One that already has its own belongs to the next redirect hop, whose
    // requestWillBeSent has not come.
    if (e && !e.sent_headers) e.sent_headers = p.headers as Headers;
    else this.#earlyFor(p.requestId).sent = p.headers as Headers;
  }

  receivedExtra(page: PageTarget, p: Protocol.Network.ResponseReceivedExtraInfoEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    const text = p.headersText !== undefined ? new TextEncoder().encode(p.headersText).length : undefined;
    if (e) {
      e.received_headers = p.headers as Headers;
      e.received_headers_text_bytes = text;
    } else {
      const early = this.#earlyFor(p.requestId);
      early.received = p.headers as Headers;
      early.text = text;
    }
  }

  response(page: PageTarget, p: Protocol.Network.ResponseReceivedEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    if (!e) return;
    const r = p.response;
    e.response = {
      status: r.status,
      status_text: r.statusText,
      protocol: r.protocol,
      remote_ip: r.remoteIPAddress,
      remote_port: r.remotePort,
      mime_type: r.mimeType,
      headers: r.headers as Headers,
      timing: r.timing,
      from_disk_cache: r.fromDiskCache ?? false,
      from_service_worker: r.fromServiceWorker ?? false,
      from_prefetch_cache: r.fromPrefetchCache ?? false,
      encoded_at_response: r.encodedDataLength,
      security_state: r.securityState,
    };
    if (p.type) e.resource_type = p.type;
  }

  servedFromCache(page: PageTarget, requestId: string): void {
    const e = this.#entries.get(this.#key(page.id, requestId));
    if (e) e.from_memory_cache = true;
  }

  data(page: PageTarget, p: Protocol.Network.DataReceivedEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    if (e) e.data_bytes += p.dataLength;
  }

  finished(page: PageTarget, p: Protocol.Network.LoadingFinishedEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    if (!e) return;
    e.state = "finished";
    e.ended = p.timestamp;
    e.encoded_bytes = p.encodedDataLength;
  }

  failed(page: PageTarget, p: Protocol.Network.LoadingFailedEvent): void {
    const e = this.#entries.get(this.#key(page.id, p.requestId));
    if (!e) return;
    e.state = "failed";
    e.ended = p.timestamp;
    e.failure = {
      error: p.errorText,
      canceled: p.canceled ?? false,
      ...(p.blockedReason ? { blocked_reason: p.blockedReason } : {}),
      ...(p.corsErrorStatus ? { cors_error: p.corsErrorStatus.corsError } : {}),
    };
  }
}

const logs = new WeakMap<BrowserSession, NetworkLog>();

/** The session's log while its events are recorded (see trackNetworkDetail). */
export function networkLogOf(session: BrowserSession): NetworkLog | undefined {
  return logs.get(session);
}

/** Starts keeping request detail for a session; the returned function stops it. */
export function trackNetworkDetail(session: BrowserSession): () => void {
  const log = logs.get(session) ?? new NetworkLog();
  logs.set(session, log);
  const offs = [
    session.onPageEvent("Network.requestWillBeSent", (page, p) => log.willBeSent(page, p)),
    session.onPageEvent("Network.requestWillBeSentExtraInfo", (page, p) => log.sentExtra(page, p)),
    session.onPageEvent("Network.responseReceived", (page, p) => log.response(page, p)),
    session.onPageEvent("Network.responseReceivedExtraInfo", (page, p) => log.receivedExtra(page, p)),
    session.onPageEvent(
      "Network.requestServedFromCache",
      (page, p) => log.servedFromCache(page, p.requestId),
    ),
    session.onPageEvent("Network.dataReceived", (page, p) => log.data(page, p)),
    session.onPageEvent("Network.loadingFinished", (page, p) => log.finished(page, p)),
    session.onPageEvent("Network.loadingFailed", (page, p) => log.failed(page, p)),
  ];
  return () => offs.forEach((off) => off());
}
