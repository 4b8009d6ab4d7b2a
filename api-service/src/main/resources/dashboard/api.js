// Calls to the FlashVec REST API from the page, with the API key the user entered (kept in
// sessionStorage: gone when the tab closes) as the `api-key` header, as Qdrant's clients send it.

const KEY = 'flashvec.api-key';

export function apiKey() {
  return sessionStorage.getItem(KEY) || '';
}

export function setApiKey(k) {
  if (k) sessionStorage.setItem(KEY, k);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function send(method, path, body) {
  const headers = {};
  const key = apiKey();
  if (key) headers['api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let r;
  try {
    r = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    throw new ApiError(0, `${method} ${path}: the server cannot be reached (${e.message})`);
  }
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try {
      const j = JSON.parse(text);
      msg = (j.status && j.status.error) || j.error || text;
    } catch (_) { /* not JSON */ }
    if (r.status === 401) msg += ' — enter the API key at the top right';
    throw new ApiError(r.status, `${method} ${path}: ${r.status} ${msg}`);
  }
  return text;
}

/**
 * Keeps integers beyond 2^53 (64-bit point and peer ids) exact: as their decimal text, where a
 * JavaScript number would round them.
 */
function exact(key, value, context) {
  return typeof value === 'number' && !Number.isSafeInteger(value) && context && /^-?\d+$/.test(context.source)
    ? context.source : value;
}

/** A point id typed or shown in the page, for a request: a number (exact past 2^53) or a UUID. */
export function pointId(text) {
  const t = String(text).trim();
  if (!/^\d+$/.test(t)) return t;
  return Number.isSafeInteger(Number(t)) ? Number(t) : JSON.rawJSON(t);
}

/** The parsed JSON body of a call (the whole envelope: result, time, flashvec_stats). */
export async function call(method, path, body) {
  return JSON.parse(await send(method, path, body), exact);
}

/** The `result` of a call. */
export async function result(method, path, body) {
  return (await call(method, path, body)).result;
}

/** A text body, e.g. /metrics. */
export async function text(path) {
  return send('GET', path);
}

export const enc = encodeURIComponent;
