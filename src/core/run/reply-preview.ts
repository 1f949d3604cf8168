/**
 * The ids a reply's previewed blocks are promised: the loop's side of
 * RunObserver.delta (loop-hooks.ts). While the model streams, the first
 * delta of a block mints the id its event will carry, and every delta goes
 * to the observers with it; when the reply is recorded, idOf() gives each
 * block its promised id, so a preview and the event it previews agree.
 *
 * Only made when an observer listens (replyPreview() is null otherwise): a
 * run nobody previews mints nothing and passes no sink to the model. Ids of
 * one reply's previewed blocks are minted as they stream, before the ids of
 * its other events; nothing orders events by id (the log's line order is
 * the order).
 */
import type { DeltaSink, ReplyDelta } from '../model/provider.js';
import type { LoopHooks, RunObserver } from './loop-hooks.js';
import type { RunContext } from './run-context.js';

export class ReplyPreview {
  private readonly ids = new Map<number, string>();

  constructor(
    private readonly ctx: RunContext,
    private readonly observers: readonly RunObserver[],
  ) {}

  /** The sink complete() reports to. Never throws (an observer's throw is swallowed, as the loop's observe() does). */
  readonly sink: DeltaSink = (d: ReplyDelta) => {
    let eventId = this.ids.get(d.index);
    if (eventId === undefined) {
      eventId = this.ctx.rt.deps.ids.event();
      this.ids.set(d.index, eventId);
    }
    for (const o of this.observers) {
      try {
        o.delta?.(this.ctx, { ...d, eventId });
      } catch {
        // an observer never changes the run
      }
    }
  };

  /** The id promised to content block `index`, if it was previewed. */
  idOf(index: number): string | undefined {
    return this.ids.get(index);
  }
}

/** A preview for one model request, or null when no observer hears deltas. */
export function replyPreview(ctx: RunContext, hooks: Pick<LoopHooks, 'observers'>): ReplyPreview | null {
  const listening = hooks.observers.filter((o) => o.delta !== undefined);
  return listening.length === 0 ? null : new ReplyPreview(ctx, listening);
}
