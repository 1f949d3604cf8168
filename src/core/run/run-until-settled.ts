/**
 * Runs a session in this process until it has nothing to do now: for a
 * caller with no daemon on the home (`openboa send --wait`, `openboa chat`,
 * a script using the library). Each run is `wake()`, exactly as the daemon
 * and `openboa wake` run it; the loop stops when the session is idle with
 * nothing pending or due (planRun says so), waits on a person, backs off
 * after a failure (its retry is a daemon's job, or the next call's), or is
 * held by another process (busy: that process runs it). At most MAX_RUNS
 * runs, so a session that keeps finding work (a revisit due every time)
 * cannot hold the caller forever.
 */
import { OpenboaError } from '../foundation/errors.js';
import { planRun } from './plan.js';
import type { Runtime } from './run-context.js';
import type { WakeResult } from './wake-api.js';
import { wake } from './wake.js';

export const MAX_RUNS = 20;

export async function runUntilSettled(rt: Runtime, sessionId: string, o: { signal?: AbortSignal; onResult?: (r: WakeResult) => void } = {}): Promise<WakeResult[]> {
  const results: WakeResult[] = [];
  while (results.length < MAX_RUNS && !o.signal?.aborted) {
    if (!planRun(rt.store.snapshot(sessionId), rt.deps.clock.now(), {}).runnable) break;
    let r: WakeResult;
    try {
      r = await wake(rt, sessionId, o.signal ? { signal: o.signal } : {});
    } catch (e) {
      if (OpenboaError.is(e) && e.code === 'busy') break; // another process holds it, and runs it
      throw e;
    }
    results.push(r);
    o.onResult?.(r);
    if (r.outcome === 'skipped' || r.status !== 'idle') break;
  }
  return results;
}
