/** Browser module util.js: DOM helpers, time format, the API client (relative URLs carry the token). */
export const UTIL_JS = `
export const $ = (sel) => document.querySelector(sel);

/** An element with text content only: data never becomes markup. */
export function el(tag, opts = {}, ...children) {
  const e = document.createElement(tag);
  if (opts.className) e.className = opts.className;
  if (opts.text !== undefined) e.textContent = String(opts.text);
  if (opts.title) e.title = String(opts.title);
  if (opts.data) for (const [k, v] of Object.entries(opts.data)) e.dataset[k] = String(v);
  if (opts.type) e.type = opts.type;
  for (const c of children) if (c) e.append(c);
  return e;
}

export function fmtMs(ms) {
  return (Math.round(ms * 10) / 10).toFixed(1) + " ms";
}

export function clamp(v, lo, hi) {
  return Math.min(hi, Math.max(lo, v));
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code);
    this.status = status;
    this.code = code;
  }
}

async function parse(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const err = (body && body.error) || {};
    throw new ApiError(res.status, err.code || "http_" + res.status, err.message || res.statusText);
  }
  return body;
}

export function apiUrl(path, params) {
  const u = new URL("api/" + path, location.href);
  if (params) for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
  return u.pathname + u.search;
}

export async function getJSON(path, params) {
  return parse(await fetch(apiUrl(path, params), { headers: { accept: "application/json" }, cache: "no-store" }));
}

export async function postJSON(path, body) {
  return parse(await fetch(apiUrl(path), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body ?? {}),
    cache: "no-store",
  }));
}

export function debounce(fn, ms) {
  let t = 0;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}
`;
