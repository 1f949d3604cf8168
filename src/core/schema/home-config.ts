/**
 * The home's own settings: `<home>/openboa.yaml` (docs/webhooks.md), and
 * the journal of webhook deliveries, `<home>/webhooks/deliveries.jsonl`.
 * A home without openboa.yaml has the defaults (no webhooks).
 */
import * as z from 'zod';
import { DefinitionId, Timestamp } from './common.js';
import { SecretRef } from './secret-ref.js';

/** The session events a webhook may deliver. */
export const WEBHOOK_EVENT_TYPES = ['session.status_idle', 'session.status_terminated', 'session.error', 'session.status_rescheduled', 'session.status_running'] as const;

export const Webhook = z.strictObject({
  /** Names the webhook in the delivery journal: renaming one starts it afresh. */
  name: DefinitionId,
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1),
  /** The signing secret, read from the daemon's environment. */
  secret: SecretRef,
});
export type Webhook = z.infer<typeof Webhook>;

export const HomeConfig = z.strictObject({
  /**
   * Whether hosts share this home (docs/daemon.md, "Several hosts on one home"); absent: judged by the file
   * system it is on. Read before this schema by store/shared-home.ts, as a top-level `shared: true|false` line.
   */
  shared: z.boolean().optional(),
  webhooks: z
    .array(Webhook)
    .default([])
    .superRefine((hooks, ctx) => {
      const seen = new Set<string>();
      hooks.forEach((h, i) => {
        if (seen.has(h.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `webhook name "${h.name}" is used twice` });
        seen.add(h.name);
      });
    }),
});
export type HomeConfig = z.infer<typeof HomeConfig>;

/**
 * A line of the delivery journal. `subscribed`: the first time the daemon
 * saw a webhook; events older than `since` are not delivered to it.
 * `send`: an attempt is about to be made (a `send` with no `result` after it
 * is an attempt whose outcome is unknown: a crash). `result`: what the
 * receiver answered; `next_at` when another attempt is due, null when the
 * delivery is done (delivered, or given up).
 */
export const WebhookJournalLine = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('subscribed'), webhook: DefinitionId, since: Timestamp }),
  z.strictObject({
    op: z.literal('send'),
    webhook: DefinitionId,
    delivery_id: z.string().min(1),
    session_id: z.string().min(1),
    event_id: z.string().min(1),
    attempt: z.number().int().positive(),
    at: Timestamp,
  }),
  z.strictObject({
    op: z.literal('result'),
    webhook: DefinitionId,
    delivery_id: z.string().min(1),
    attempt: z.number().int().positive(),
    at: Timestamp,
    ok: z.boolean(),
    /** The HTTP status, null when no answer came (refused, timed out). */
    status: z.number().int().nullable(),
    error: z.string().nullable(),
    next_at: Timestamp.nullable(),
  }),
]);
export type WebhookJournalLine = z.infer<typeof WebhookJournalLine>;
