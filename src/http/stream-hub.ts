/**
 * The live side of GET …/events/stream: one subscription to a session's log
 * (store.subscribe: the same folder watching as `openboa events --follow`
 * and the daemon) shared by every client streaming that session, and the
 * Server-Sent Events each client reads.
 *
 * Contracts:
 * - Only new events: a client gets what is appended after it attached. The
 *   first client's attach takes the log's end as the subscription's start
 *   (the snapshot's cursor) before its response is sent, so nothing a
 *   client POSTs after seeing the headers is missed. A client attaching to a
 *   subscription that is still behind may get a few events from just before
 *   it attached: clients drop duplicates by id (docs/http.md, resume recipe).
 * - Every message has an `event:` line (the SDK skips messages without
 *   one); a `: ping` comment goes to every client each `pingMs` on the
 *   injected clock (one timer per session, not per client).
 * - When the subscription fails (the session was deleted, its log became
 *   unreadable), every client gets `event: error` with the API's envelope
 *   and its stream ends.
 * - A client that goes away (or whose unread output passes MAX_BUFFERED
 *   bytes: it is cut with an `event: error`) is dropped at once; the last
 *   one to go ends the subscription and its timer. Nothing is kept per
 *   session once no one streams it.
 * - A run's client (a run token: `run` given to open()) is served only while
 *   that run lasts: its stream ends after the event that ends the run
 *   (session.status_idle, _rescheduled or _terminated written by the run),
 *   and at once when `run.live()` says, just after the client attached, that
 *   the run is over already (it ended between the request's check and the
 *   attach, before the subscription's start).
 * - Clients are bounded, so neither a program nor an agent holding a run
 *   token can make the server keep unbounded streams (each may hold up to
 *   MAX_BUFFERED unread): at most `limits.perSession` at once on one
 *   session, `limits.perRun` held by one run's token (over its session and
 *   its children), `limits.perKey` held by the key (over all sessions). A
 *   stream past one is refused before it is attached: open() throws a 429
 *   `rate_limit_error` naming the limit, which the route answers in the
 *   API's envelope. The check and the attach are one synchronous step.
 * - Previews (`event_deltas`): a client that asks for them also gets, for
 *   the types it named, `event_start` / `event_delta` messages of what a
 *   run in this process is writing (core/run/preview-hub.ts, one watch per
 *   session while some client of it asks), before the recorded event that
 *   concludes them. A client gets deltas only of previews it saw start.
 *   Previews are never in the log. A hub built without a PreviewHub (no
 *   run shares the server's process) says so in a comment and streams
 *   whole events.
 */
import type { Clock } from '../core/foundation/clock.js';
import type { Redactor } from '../core/foundation/redact.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { EventLines } from '../core/store/store-types.js';
import type { PreviewHub, Preview } from '../core/run/preview-hub.js';
import { ApiError, apiErrorBodyOf } from './api-error.js';
import { wireEvent } from './wire-objects.js';

/** A ping every 15 s keeps proxies and load balancers from closing an idle stream. */
export const PING_MS = 15_000;
/** Bytes a client may leave unread before it is cut off (a stalled reader must not hold the server's memory). */
export const MAX_BUFFERED = 8 * 1024 * 1024;

/** How many streams may be open at once (see the contract above). */
export interface StreamLimits {
  /** On one session, whoever holds them. */
  perSession: number;
  /** Held by one run's token, over its session and its children. */
  perRun: number;
  /** Held by the API key, over every session. */
  perKey: number;
}

/**
 * An agent needs one stream of its own session and one per child it
 * follows; each stream may hold MAX_BUFFERED unread, so 8 per run bounds
 * what one run can make the server hold at 64 MiB. The key is a person's or
 * their program's: its limits catch a program that never closes its streams,
 * while leaving room for a fan-out (docs/benchmarks.md streams 200 clients
 * of one session).
 */
export const STREAM_LIMITS: StreamLimits = Object.freeze({ perSession: 256, perRun: 8, perKey: 1024 });

/** Previews a client follows at once (a reply has a few text blocks; the rest are of replies that failed). */
const MAX_OPEN_PREVIEWS = 64;

const enc = new TextEncoder();

interface Client {
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
  /** Whose stream it is, for the limits: `key`, or `run:<run id>`. */
  holder: string;
  /** A run's client: its stream ends with that run (see the contract above). */
  runId?: string;
  /** A run's client: whether its run still holds its lease, asked again at each ping (a child's stream never sees its parent's run end). */
  live?: () => Promise<boolean>;
  /** The types it wants previews of, and the previews it saw start and not yet concluded (event ids). */
  deltas?: { types: ReadonlySet<string>; open: Set<string> };
}

export type DeltaType = 'agent.message' | 'agent.thinking';

export interface OpenOptions {
  /** A run's client: see RunBound. Without it, the key's. */
  run?: RunBound;
  /** `event_deltas[]`: the types to preview (none: whole events only). */
  deltas?: readonly DeltaType[];
}

/** Who streams for a run: the run, and whether it still holds the session's lease. */
export interface RunBound {
  runId: string;
  live(): Promise<boolean>;
}

/** The events that end a run (its last status). */
const RUN_ENDS = new Set(['session.status_idle', 'session.status_rescheduled', 'session.status_terminated']);

interface Feed {
  clients: Set<Client>;
  stop: AbortController;
  cancelPing: () => void;
  /** Ends the watch of the session's previews; null while no client asks for them. */
  unwatch: (() => void) | null;
}

export class StreamHub {
  private readonly feeds = new Map<string, Feed>();
  private readonly waiters: Array<{ clients: number; resolve: () => void }> = [];
  /** Streams open per holder (Client.holder); a holder with none has no entry. */
  private readonly held = new Map<string, number>();

  /** `previews`: the process's PreviewHub when runs may share the server's process; null when none does (`openboa serve`). */
  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    private readonly pingMs = PING_MS,
    private readonly previews: PreviewHub | null = null,
    private readonly limits: StreamLimits = STREAM_LIMITS,
  ) {}

  /** Whether event_deltas are served (a run of this process can be previewed). */
  get servesDeltas(): boolean {
    return this.previews !== null;
  }

  /** How many sessions are streamed now, and to how many clients (for tests and the benchmark). */
  get stats(): { sessions: number; clients: number } {
    let clients = 0;
    for (const f of this.feeds.values()) clients += f.clients.size;
    return { sessions: this.feeds.size, clients };
  }

  /**
   * A new client of session `id`'s stream: the body of its response. It is
   * attached before this returns (see "Only new events"); `signal` (the
   * request's) detaches it, as does the reader cancelling.
   */
  open(id: string, redactor: Redactor, signal: AbortSignal, o: OpenOptions = {}): ReadableStream<Uint8Array> {
    const { run } = o;
    const holder = run ? `run:${run.runId}` : 'key';
    this.admit(id, holder, run ? this.limits.perRun : this.limits.perKey);
    const types = o.deltas?.length ? new Set<string>(o.deltas) : null;
    let client!: Client;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          client = { controller, closed: false, holder, ...(run ? { runId: run.runId, live: () => run.live() } : {}), ...(types && this.previews ? { deltas: { types, open: new Set<string>() } } : {}) };
          // A comment first: the response has bytes to send at once, so its headers go now.
          controller.enqueue(enc.encode(': connected\n\n'));
          if (types && !this.previews) controller.enqueue(enc.encode(': event_deltas not served: no run shares this server\'s process; whole events only\n\n'));
        },
        cancel: () => this.detach(id, client),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
    );
    this.attach(id, client, redactor);
    signal.addEventListener('abort', () => this.detach(id, client), { once: true });
    if (signal.aborted) this.detach(id, client);
    if (run) {
      void run.live().then(
        (live) => live || this.end(id, client),
        () => this.end(id, client),
      );
    }
    return stream;
  }

  /** Throws the 429 when one more stream of `holder` on session `id` would pass a limit. */
  private admit(id: string, holder: string, perHolder: number): void {
    const onSession = this.feeds.get(id)?.clients.size ?? 0;
    if (onSession >= this.limits.perSession) {
      throw new ApiError('rate_limit_error', `session ${id} has ${onSession} event streams open, the most it may have at once: close one first`, false);
    }
    const mine = this.held.get(holder) ?? 0;
    if (mine >= perHolder) {
      const who = holder === 'key' ? 'the API key' : 'this run token';
      throw new ApiError('rate_limit_error', `${who} holds ${mine} event streams open, the most it may hold at once: close one first`, false);
    }
  }

  /** Resolves once exactly `clients` clients are attached (over all sessions): for tests and the benchmark. */
  whenClients(clients: number): Promise<void> {
    if (this.stats.clients === clients) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ clients, resolve }));
  }

  private changed(): void {
    const n = this.stats.clients;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.clients !== n) continue;
      this.waiters.splice(i, 1);
      w.resolve();
    }
  }

  /** Ends every stream (the server is stopping). */
  closeAll(): void {
    for (const [id, f] of this.feeds) for (const c of [...f.clients]) this.end(id, c);
  }

  private attach(id: string, client: Client, redactor: Redactor): void {
    let feed = this.feeds.get(id);
    if (!feed) {
      const from = this.store.snapshot(id, { persist: false }).journals.events;
      const stop = new AbortController();
      const made: Feed = { clients: new Set(), stop, cancelPing: () => {}, unwatch: null };
      feed = made;
      this.feeds.set(id, made);
      this.armPing(id, made);
      this.store
        .subscribe(id, { from, signal: stop.signal }, (batch) => this.broadcast(id, made, batch, redactor))
        .catch((e: unknown) => {
          if (stop.signal.aborted) return;
          const msg = enc.encode(`event: error\ndata: ${JSON.stringify(apiErrorBodyOf(e))}\n\n`);
          for (const c of [...made.clients]) {
            this.send(id, c, msg);
            this.end(id, c);
          }
        });
    }
    feed.clients.add(client);
    this.held.set(client.holder, (this.held.get(client.holder) ?? 0) + 1);
    if (client.deltas && this.previews && !feed.unwatch) {
      const f = feed;
      f.unwatch = this.previews.watch(id, (p) => this.preview(id, f, p));
    }
    this.changed();
  }

  /** A preview to the clients that asked for its type; one encoding for all. */
  private preview(id: string, f: Feed, p: Preview): void {
    const msg =
      p.kind === 'start'
        ? `event: event_start\ndata: ${JSON.stringify({ type: 'event_start', event: { id: p.eventId, type: p.type } })}\n\n`
        : `event: event_delta\ndata: ${JSON.stringify({ type: 'event_delta', event_id: p.eventId, delta: { type: 'content_delta', index: 0, content: { type: 'text', text: p.text } } })}\n\n`;
    let bytes: Uint8Array | null = null;
    for (const c of [...f.clients]) {
      const d = c.deltas;
      if (!d) continue;
      if (p.kind === 'start') {
        if (!d.types.has(p.type)) continue;
        // agent.thinking previews are start-only: nothing follows to route.
        if (p.type === 'agent.message') {
          d.open.add(p.eventId);
          // A preview whose reply failed is never concluded: the oldest go once there are this many.
          if (d.open.size > MAX_OPEN_PREVIEWS) d.open.delete(d.open.values().next().value as string);
        }
      } else if (!d.open.has(p.eventId)) continue;
      this.send(id, c, (bytes ??= enc.encode(msg)));
    }
  }

  private armPing(id: string, f: Feed): void {
    f.cancelPing = this.clock.setTimer(this.pingMs, () => {
      if (this.feeds.get(id) !== f) return;
      const ping = enc.encode(': ping\n\n');
      for (const c of [...f.clients]) {
        this.send(id, c, ping);
        // A run token's stream of another session (a child's) never sees its own run's end: its lease says.
        if (c.live) void c.live().then((live) => live || this.end(id, c), () => this.end(id, c));
      }
      this.armPing(id, f);
    });
  }

  private broadcast(id: string, f: Feed, batch: EventLines, redactor: Redactor): void {
    let text = '';
    let ended: Set<string> | null = null;
    for (const l of batch.lines) {
      if (l.kind !== 'event') continue;
      const e = wireEvent(l.event, undefined, redactor);
      text += `event: ${l.event.type}\ndata: ${JSON.stringify(e)}\n\n`;
      if (RUN_ENDS.has(l.event.type) && 'wake_id' in l.event && typeof l.event.wake_id === 'string') (ended ??= new Set()).add(l.event.wake_id);
    }
    if (text === '') return;
    // One encoding for every client.
    const bytes = enc.encode(text);
    for (const c of [...f.clients]) {
      this.send(id, c, bytes);
      if (c.deltas?.open.size) concluded(c.deltas.open, batch);
      if (c.runId !== undefined && ended?.has(c.runId)) this.end(id, c);
    }
  }

  private send(id: string, c: Client, bytes: Uint8Array): void {
    if (c.closed) return;
    if ((c.controller.desiredSize ?? 0) < -MAX_BUFFERED) {
      const cut = enc.encode(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'the stream was not read fast enough; reconnect and list the events since the last one seen' } })}\n\n`);
      c.controller.enqueue(cut);
      this.end(id, c);
      return;
    }
    c.controller.enqueue(bytes);
  }

  private end(id: string, c: Client): void {
    if (!c.closed) {
      try {
        c.controller.close();
      } catch {
        // already closed by the reader
      }
    }
    this.detach(id, c);
  }

  private detach(id: string, c: Client): void {
    c.closed = true;
    const f = this.feeds.get(id);
    if (!f || !f.clients.delete(c)) return;
    const left = (this.held.get(c.holder) ?? 1) - 1;
    if (left > 0) this.held.set(c.holder, left);
    else this.held.delete(c.holder);
    if (f.clients.size === 0) {
      this.feeds.delete(id);
      f.cancelPing();
      f.stop.abort();
    }
    if (f.unwatch && ![...f.clients].some((x) => x.deltas)) {
      f.unwatch();
      f.unwatch = null;
    }
    this.changed();
  }
}

/** Drops from `open` the previews `batch` concludes (their recorded event). */
function concluded(open: Set<string>, batch: EventLines): void {
  for (const l of batch.lines) if (l.kind === 'event') open.delete(l.event.id);
}
