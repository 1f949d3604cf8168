/**
 * What one webhook delivery is (docs/webhooks.md): its id, its body, its
 * signature and when it is tried again. Pure: the daemon's dispatcher
 * (src/daemon/webhook-dispatcher.ts) does the sending and the journal.
 *
 * Signing follows Standard Webhooks: the headers `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`), so a receiver
 * can verify with any Standard Webhooks library. The key is the secret's
 * bytes, or for a secret written `whsec_<base64>` the decoded base64, as
 * those libraries take it.
 */
import { createHash, createHmac } from 'node:crypto';
import type { SessionEvent } from '../schema/index.js';

/** The same delivery always has the same id: a receiver drops a repeat by it. */
export function deliveryId(webhook: string, sessionId: string, eventId: string): string {
  return `whd_${createHash('sha256').update(`${webhook}\n${sessionId}\n${eventId}`).digest('hex').slice(0, 32)}`;
}

export interface WebhookBody {
  id: string;
  type: SessionEvent['type'];
  created_at: string;
  session_id: string;
  /** The event as the log holds it (redacted there), e.g. session.status_idle with its stop_reason. */
  event: SessionEvent;
}

export function webhookBody(id: string, sessionId: string, event: SessionEvent): string {
  const body: WebhookBody = { id, type: event.type, created_at: event.created_at, session_id: sessionId, event };
  return JSON.stringify(body);
}

function key(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/** The headers of one attempt: Standard Webhooks' three, and the attempt's number. */
export function signedHeaders(id: string, body: string, secret: string, nowMs: number, attempt: number): Record<string, string> {
  const ts = String(Math.floor(nowMs / 1000));
  const sig = createHmac('sha256', key(secret)).update(`${id}.${ts}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': ts,
    'webhook-signature': `v1,${sig}`,
    'openboa-attempt': String(attempt),
  };
}

/** Whether `signature` (a `webhook-signature` header) signs this id, timestamp and body with `secret`. */
export function verifySignature(secret: string, id: string, timestamp: string, body: string, signature: string): boolean {
  const want = createHmac('sha256', key(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return signature.split(' ').some((s) => s === `v1,${want}`);
}

/** Attempts in all before a delivery is given up (about 3 hours of retries). */
export const WEBHOOK_MAX_ATTEMPTS = 10;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 60 * 60_000;

/**
 * The wait after failed attempt number `attempt` (1-based): 5 s, tripling,
 * capped at 1 hour, less up to a quarter by `random` (so deliveries that
 * failed together do not retry together); null once WEBHOOK_MAX_ATTEMPTS
 * were made.
 */
export function retryDelayMs(attempt: number, random: () => number): number | null {
  if (attempt >= WEBHOOK_MAX_ATTEMPTS) return null;
  const cap = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 3 ** (attempt - 1));
  return Math.round(cap * (1 - 0.25 * Math.min(1, Math.max(0, random()))));
}
