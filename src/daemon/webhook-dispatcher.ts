/**
 * The daemon's webhooks (docs/webhooks.md): each event of a type a webhook
 * of `openboa.yaml` asks for is POSTed to its URL, signed
 * (core/webhooks/webhook-delivery.ts), and tried again with backoff until
 * the receiver answers 2xx or WEBHOOK_MAX_ATTEMPTS were made.
 *
 * The session logs say what is due; the delivery journal
 * (core/webhooks/delivery-journal.ts) says what was done. At start every
 * log changed since the oldest webhook's subscription is read, so an event
 * appended while no daemon ran (or just before a crash) is delivered; a
 * delivery the journal shows done is never sent again, and one whose last
 * attempt has no result (a crash while sending) is sent again with the same
 * `webhook-id` and the next `openboa-attempt`, so a repeat is never silent.
 *
 * Contracts:
 * - hint(id): the session's log may have grown (the watcher's hint); read
 *   on the next turn of the event loop, coalesced.
 * - Never blocks a run: sends are fetches on the event loop, at most
 *   MAX_IN_FLIGHT at a time, each cut off after SEND_TIMEOUT_MS on the
 *   injected clock; nothing a run waits on waits for them.
 * - Never throws: a bad openboa.yaml, an unreadable log or journal is a
 *   notice; webhooks are never a reason for the daemon to stop.
 * - The configuration is read at start.
 */
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Runtime } from '../core/run/run-context.js';
import type { SessionEvent, SessionSnapshot, Webhook } from '../core/schema/index.js';
import { START, type Cursor } from '../core/store/jsonl.js';
import { iso } from '../core/foundation/clock.js';
import { loadHomeConfig } from '../core/definitions/home-config.js';
import { appendDeliveryJournal, apply, readDeliveryJournal, type JournalFold } from '../core/webhooks/delivery-journal.js';
import { deliveryId, retryDelayMs, signedHeaders, webhookBody } from '../core/webhooks/webhook-delivery.js';

/** Deliveries sent at once; the rest wait their turn. */
export const MAX_IN_FLIGHT = 4;
/** A receiver that has not answered in this long has failed the attempt. */
export const SEND_TIMEOUT_MS = 10_000;

export interface WebhookDispatcherOptions {
  rt: Runtime;
  /** How often every watched log is read again for what a hint missed. */
  sweepMs: number;
  notice: (message: string, fields?: Record<string, unknown>) => void;
}

interface Due {
  hook: Webhook;
  id: string;
  sessionId: string;
  event: SessionEvent;
}

export class WebhookDispatcher {
  private hooks: Webhook[] = [];
  private fold: JournalFold = { since: new Map(), deliveries: new Map(), skipped: [] };
  private readonly cursors = new Map<string, Cursor>();
  /** Deliveries with a timer armed or an attempt under way. */
  private readonly active = new Set<string>();
  private readonly timers = new Map<string, () => void>();
  private readonly sends = new PQueue({ concurrency: MAX_IN_FLIGHT });
  private readonly aborts = new Set<AbortController>();
  private readonly hinted = new Set<string>();
  private flushArmed = false;
  private cancelSweep: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly o: WebhookDispatcherOptions) {}

  /** Reads the configuration and the journal, then catches up every log in the background. */
  async start(): Promise<void> {
    try {
      this.hooks = loadHomeConfig(this.o.rt.home).webhooks;
      if (this.hooks.length === 0) return;
      this.fold = readDeliveryJournal(this.o.rt.home);
      for (const s of this.fold.skipped) this.o.notice(`webhooks/deliveries.jsonl ${s}: skipped`, { event: 'webhook_journal_line_skipped' });
      const now = this.o.rt.deps.clock.now();
      for (const h of this.hooks) {
        if (this.fold.since.has(h.name)) continue;
        this.record({ op: 'subscribed', webhook: h.name, since: iso(now) });
      }
    } catch (e) {
      this.hooks = [];
      this.o.notice(`webhooks off: ${(e as Error).message}`, { event: 'webhook_config_error' });
      return;
    }
    const oldest = Math.min(...this.hooks.map((h) => this.fold.since.get(h.name) ?? 0));
    try {
      for (const id of this.o.rt.store.listIds()) {
        if (this.stopped) return;
        // A log not written since the oldest subscription holds nothing due.
        const mtime = fs.statSync(this.o.rt.store.paths(id).events, { throwIfNoEntry: false })?.mtimeMs ?? 0;
        if (mtime >= oldest) this.read(id);
        await yieldToLoop();
      }
    } catch (e) {
      this.o.notice(`webhooks: the catch-up stopped short (${(e as Error).message}); the sweep reads on`, { event: 'webhook_error' });
    }
    this.arm();
  }

  hint(sessionId: string): void {
    if (this.stopped || this.hooks.length === 0) return;
    this.hinted.add(sessionId);
    if (this.flushArmed) return;
    this.flushArmed = true;
    setImmediate(() => {
      this.flushArmed = false;
      for (const id of this.hinted) this.read(id);
      this.hinted.clear();
    });
  }

  /** Resolves when no attempt is under way or waiting for a free slot (armed retries are not waited for). */
  async idle(): Promise<void> {
    await this.sends.onIdle();
  }

  stop(): void {
    this.stopped = true;
    this.cancelSweep?.();
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.sends.clear();
    for (const a of this.aborts) a.abort(new Error('the daemon is stopping'));
  }

  private arm(): void {
    if (this.stopped) return;
    this.cancelSweep = this.o.rt.deps.clock.setTimer(this.o.sweepMs, () => {
      for (const id of this.cursors.keys()) this.read(id);
      this.arm();
    });
  }

  /**
   * Reads the session's log on from where it was read last, and arms what is
   * due. Only what the fold accepted goes out: the session is folded first,
   * the log is read no further than that fold's cursor, and the lines it
   * refused (a session.status_idle written by hand: no run wrote it, see
   * store/fold.ts unproven) are skipped, whether still `rejected` or
   * `reported` since by a session.error.
   */
  private read(sessionId: string): void {
    let batch;
    let refused: Set<number>;
    try {
      const snap = this.o.rt.store.snapshot(sessionId, { persist: false });
      refused = refusedLines(snap);
      const from = this.cursors.get(sessionId) ?? START;
      const until = snap.journals.events;
      // A log replaced since (another inode) is read again from its start, as readEvents would.
      const start = from.ino !== 0 && from.ino !== until.ino ? START : from;
      if (until.line <= start.line) return;
      batch = this.o.rt.store.readEvents(sessionId, start, { maxLines: until.line - start.line });
    } catch (e) {
      this.cursors.delete(sessionId);
      if ((e as { code?: string }).code !== 'not_found') this.o.notice(`webhooks: cannot read session ${sessionId}: ${(e as Error).message}`, { session_id: sessionId });
      return;
    }
    this.cursors.set(sessionId, batch.cursor);
    for (const line of batch.lines) {
      if (line.kind !== 'event' || refused.has(line.line)) continue;
      for (const hook of this.hooks) {
        if (!(hook.events as readonly string[]).includes(line.event.type)) continue;
        if (Date.parse(line.event.created_at) < (this.fold.since.get(hook.name) ?? Infinity)) continue;
        this.schedule({ hook, id: deliveryId(hook.name, sessionId, line.event.id), sessionId, event: line.event });
      }
    }
  }

  private schedule(d: Due): void {
    const state = this.fold.deliveries.get(d.id);
    if (this.stopped || state?.done || this.active.has(d.id)) return;
    this.active.add(d.id);
    const wait = Math.max(0, (state?.nextAt ?? 0) - this.o.rt.deps.clock.now());
    const go = () => {
      this.timers.delete(d.id);
      this.sends.add(() => this.send(d)).catch((e: unknown) => this.o.notice(`webhook ${d.hook.name}: ${(e as Error).message}`, { event: 'webhook_error', session_id: d.sessionId }));
    };
    if (wait === 0) go();
    else this.timers.set(d.id, this.o.rt.deps.clock.setTimer(wait, go));
  }

  /** One attempt: `send` journaled, the POST, its `result` journaled, the retry armed. */
  private async send(d: Due): Promise<void> {
    if (this.stopped) return;
    const { clock, env, random } = this.o.rt.deps;
    const attempt = (this.fold.deliveries.get(d.id)?.attempts ?? 0) + 1;
    this.record({ op: 'send', webhook: d.hook.name, delivery_id: d.id, session_id: d.sessionId, event_id: d.event.id, attempt, at: iso(clock.now()) });
    let status: number | null = null;
    let error: string | null = null;
    const secret = env[d.hook.secret.secret.env];
    if (!secret) {
      error = `the secret's environment variable ${d.hook.secret.secret.env} is not set`;
    } else {
      const body = webhookBody(d.id, d.sessionId, d.event);
      const abort = new AbortController();
      this.aborts.add(abort);
      const cancel = clock.setTimer(SEND_TIMEOUT_MS, () => abort.abort(new Error(`no answer in ${SEND_TIMEOUT_MS / 1000} s`)));
      try {
        const res = await fetch(d.hook.url, { method: 'POST', body, headers: signedHeaders(d.id, body, secret, clock.now(), attempt), signal: abort.signal, redirect: 'manual' });
        status = res.status;
        await res.body?.cancel();
        if (status < 200 || status > 299) error = `HTTP ${status}`;
      } catch (e) {
        error = abort.signal.aborted ? String((abort.signal.reason as Error)?.message ?? abort.signal.reason) : (e as Error).message;
      } finally {
        cancel();
        this.aborts.delete(abort);
      }
    }
    // Stopping cut this attempt short: its `send` stands alone, so the next start tries again at once.
    if (this.stopped) return;
    const ok = error === null;
    const delay = ok ? null : retryDelayMs(attempt, random);
    const nextAt = delay === null ? null : clock.now() + delay;
    this.record({ op: 'result', webhook: d.hook.name, delivery_id: d.id, attempt, at: iso(clock.now()), ok, status, error, next_at: nextAt === null ? null : iso(nextAt) });
    this.active.delete(d.id);
    if (!ok && nextAt === null) this.o.notice(`webhook ${d.hook.name}: gave up delivering ${d.event.type} of session ${d.sessionId} after ${attempt} attempts (${error})`, { event: 'webhook_given_up', session_id: d.sessionId });
    if (nextAt !== null) this.schedule(d);
  }

  private record(line: Parameters<typeof appendDeliveryJournal>[1]): void {
    appendDeliveryJournal(this.o.rt.home, line);
    apply(this.fold, line);
  }
}

/** Lines of events.jsonl the fold refused: those not yet reported and those a session.error reported. */
function refusedLines(s: SessionSnapshot): Set<number> {
  const out = new Set<number>();
  for (const r of s.rejected) if (r.file === 'events.jsonl') out.add(r.line);
  for (const k of s.reported) if (k.startsWith('events.jsonl:')) out.add(Number(k.slice('events.jsonl:'.length)));
  return out;
}
