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
