/**
 * `<home>/webhooks/deliveries.jsonl` (schema/home-config.ts,
 * WebhookJournalLine; docs/webhooks.md): every attempt to deliver a
 * webhook, append-only, each line one write, fdatasynced. Folded, it says
 * since when each webhook delivers, and for each delivery how many
 * attempts were made, whether it is done, and when the next one is due.
 * A torn last line (a crash in the append) is not read; a line that is not
 * one of the journal's is skipped and reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../foundation/home.js';
import { WebhookJournalLine } from '../schema/index.js';
import { appendLines, readLines } from '../store/jsonl.js';

export interface DeliveryState {
  attempts: number;
  /** Delivered, or given up. */
  done: boolean;
  /** When the next attempt is due (ms); null: at once (never tried, or an attempt's outcome is unknown). */
  nextAt: number | null;
}

export interface JournalFold {
  since: Map<string, number>;
  deliveries: Map<string, DeliveryState>;
  /** Lines that could not be read, as "line N: why". */
  skipped: string[];
}

export const deliveryJournalFile = (home: Home) => path.join(home.root, 'webhooks', 'deliveries.jsonl');

export function readDeliveryJournal(home: Home): JournalFold {
  const fold: JournalFold = { since: new Map(), deliveries: new Map(), skipped: [] };
  const file = deliveryJournalFile(home);
  if (!fs.existsSync(file)) return fold;
  for (const raw of readLines(file).lines) {
    if (raw.text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw.text);
    } catch {
      fold.skipped.push(`line ${raw.no}: not JSON`);
      continue;
    }
    const r = WebhookJournalLine.safeParse(value);
    if (!r.success) {
      fold.skipped.push(`line ${raw.no}: ${r.error.issues[0]?.message ?? 'not a journal line'}`);
      continue;
    }
    apply(fold, r.data);
  }
  return fold;
}

/** Folds one line in: what the dispatcher does as it appends, and what a read does after a restart. */
export function apply(fold: JournalFold, l: WebhookJournalLine): void {
  if (l.op === 'subscribed') {
    if (!fold.since.has(l.webhook)) fold.since.set(l.webhook, Date.parse(l.since));
    return;
  }
  const d = fold.deliveries.get(l.delivery_id) ?? { attempts: 0, done: false, nextAt: null };
  if (l.op === 'send') {
    d.attempts = Math.max(d.attempts, l.attempt);
    d.nextAt = null;
  } else {
    d.done = l.ok || l.next_at === null;
    d.nextAt = l.next_at === null ? null : Date.parse(l.next_at);
  }
  fold.deliveries.set(l.delivery_id, d);
}

export function appendDeliveryJournal(home: Home, line: WebhookJournalLine): void {
  const file = deliveryJournalFile(home);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  appendLines(file, [JSON.stringify(WebhookJournalLine.parse(line))], { durable: true });
}
