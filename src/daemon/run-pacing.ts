/**
 * Which run goes first on the daemon's one thread. Every run of the daemon
 * shares one event loop: at each await, whichever run's continuation is next
 * goes on, so with four runs in flight each takes about a quarter of the
 * thread and lasts about four times its own work. A parent taking in its
 * children's reports is the run a whole tree waits on, and it is short; a
 * tree's children are many, and each report they end with is one more line
 * the parent must take in.
 *
 * So a run that takes in reports is urgent while it lasts: every other run
 * steps aside at its step boundaries (before each model request and before
 * its after-run hooks) by one turn of the event loop (setImmediate). Work
 * already queued as promise continuations, the urgent run's, goes first; a
 * run that steps aside is never held longer than that turn, so nothing
 * starves: when the urgent run waits on I/O (a model's answer), the others
 * go on at once.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LoopHooks } from '../core/run/loop-hooks.js';
import type { SessionSnapshot } from '../core/schema/index.js';

export class RunPacing {
  private readonly urgent = new Set<string>();

  /** Marks the run of `sessionId` urgent until end(sessionId). */
  begin(sessionId: string): void {
    this.urgent.add(sessionId);
  }

  end(sessionId: string): void {
    this.urgent.delete(sessionId);
  }

  /** Whether some run is urgent now. */
  get busy(): boolean {
    return this.urgent.size > 0;
  }

  /** Resolves at once when no run is urgent, else after one turn of the event loop. */
  async stepAside(): Promise<void> {
    if (this.urgent.size > 0) await nextTurn();
  }

  /** A run's hooks with its step boundaries paced: the model's requests and the after-run hooks wait for stepAside(). */
  paced(hooks: LoopHooks): LoopHooks {
    const { model } = hooks;
    const pacedModel: LoopHooks['model'] = {
      name: model.name,
      ...(model.secrets ? { secrets: model.secrets } : {}),
      complete: async (req, signal, onDelta) => {
        await this.stepAside();
        return model.complete(req, signal, onDelta);
      },
      ...(model.countTokens ? { countTokens: (req, signal) => model.countTokens!(req, signal) } : {}),
    };
    return {
      ...hooks,
      model: pacedModel,
      afterRun: [
        {
          afterRun: async (_ctx, _journal, ending) => {
            await this.stepAside();
            return ending;
          },
        },
        ...hooks.afterRun,
      ],
    };
  }
}

/** Seconds of waiting a session with children's reports to read is credited with in the run queue. */
const REPORT_HEAD_START_S = 300;

/**
 * A queued run's place: the seconds the session has waited (since its log
 * last changed), so after a crash loop or with more work than concurrency
 * the ones left behind are not starved. A parent with reports to read gets a
 * head start (its tree waits on it, and reading a report is short), as if
 * it had waited REPORT_HEAD_START_S longer: not an absolute first place a
 * busy tree could hold.
 */
export function queuePriority(snap: SessionSnapshot | undefined, nowMs: number): { priority: number; reports: boolean } {
  const waited = snap ? Math.max(0, Math.floor((nowMs - Date.parse(snap.updated_at)) / 1000)) : 0;
  const reports = snap?.pending_events.some((p) => p.type === 'session.thread_status_idle' || p.type === 'agent.thread_message_received') === true;
  const priority = (Number.isFinite(waited) ? waited : 0) + (reports ? REPORT_HEAD_START_S : 0);
  return { priority: Math.min(priority, 1e9), reports };
}
