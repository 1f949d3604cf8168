/**
 * runtime/activations.jsonl: what the daemon did with a session, one line
 * per step — leased (a run started), acked (it ended), requeued (it ended
 * rescheduled, or more work arrived during it), blocked (another process held
 * the lease), abandoned (the run failed outside the harness) — with reasons.
 * A journal for people; nothing reads it back to make decisions.
 */
import path from 'node:path';
import fs from 'node:fs';
import type { WakeResult } from '../core/run/wake-api.js';
import { appendLines } from '../core/store/jsonl.js';

export type ActivationKind = 'leased' | 'acked' | 'requeued' | 'blocked' | 'abandoned';

export interface Activation {
  kind: ActivationKind;
  at: string;
  wake_id?: string | null;
  trigger?: string | null;
  reason?: string;
  stop_reason?: string | null;
  retry_at?: string | null;
  processed_event_ids?: string[];
  wakes_consumed?: string[];
}

export function recordActivation(runtimeDir: string, a: Activation): void {
  try {
    fs.mkdirSync(runtimeDir, { recursive: true });
    appendLines(path.join(runtimeDir, 'activations.jsonl'), [JSON.stringify(a)]);
  } catch {
    // a journal for people: losing a line must not stop the daemon
  }
}

/** The line for a run that executed and ended: acked, or requeued when it ended rescheduled. */
export function endActivation(r: WakeResult, at: string): Activation {
  const requeued = r.status === 'rescheduling';
  return {
    kind: requeued ? 'requeued' : 'acked',
    at,
    wake_id: r.wake_id,
    trigger: r.trigger,
    stop_reason: r.stop_reason?.type ?? null,
    retry_at: r.retry_at,
    processed_event_ids: r.processed_event_ids,
    wakes_consumed: r.wakes_consumed,
    ...(requeued ? { reason: `rescheduled until ${r.retry_at}` } : {}),
  };
}
