// The inspector's only door to the server: the public /v1 API with the key
// the person typed, kept for this tab in sessionStorage (never localStorage:
// it goes when the tab closes). Streams are read with fetch, since
// EventSource cannot send the key.
import { h } from './vendor/preact.mjs';
import htm from './vendor/htm.mjs';

export const html = htm.bind(h);

const KEY = 'openboa.inspector.key';
export const getKey = () => sessionStorage.getItem(KEY);
export const setKey = (k) => sessionStorage.setItem(KEY, k);
export const clearKey = () => sessionStorage.removeItem(KEY);

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** One /v1 call; the answer's JSON, or an ApiError with the envelope's message. */
export async function api(method, path, body) {
  const headers = { 'x-api-key': getKey() ?? '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json().catch(() => null);
  if (!r.ok) {
    if (r.status === 401) window.dispatchEvent(new Event('openboa:unauthorized'));
    throw new ApiError(r.status, j?.error?.message ?? `HTTP ${r.status}`);
  }
  return j;
}

/** A query string from an object: arrays as `k[]=v` (as the SDK sends them), empty values left out. */
export function qs(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const x of v) p.append(`${k}[]`, x);
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Appends events to a session: POST /v1/sessions/{id}/events. */
export const sendEvents = (id, events) => api('POST', `/v1/sessions/${id}/events`, { events });

/**
 * Reads a session's SSE stream, calling onEvent for each event; onState('open' | 'closed').
 * Reconnects after a drop (the caller fills the gap from the list: docs/http.md "Resuming").
 * Returns a function that stops it.
 */
export function openStream(id, onEvent, onState) {
  const ctl = new AbortController();
  (async () => {
    while (!ctl.signal.aborted) {
      try {
        const r = await fetch(`/v1/sessions/${id}/events/stream`, { headers: { 'x-api-key': getKey() ?? '' }, signal: ctl.signal });
        if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
        onState('open');
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf('\n\n')) !== -1) {
            const msg = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const data = msg.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
            const type = /^event: ?(.*)$/m.exec(msg)?.[1];
            if (data && type !== 'error') onEvent(JSON.parse(data));
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      onState('closed');
      await new Promise((res) => setTimeout(res, 2000));
    }
  })();
  return () => ctl.abort();
}
