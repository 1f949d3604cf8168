/**
 * An in-process daemon over a test bench (real watcher, real store, real
 * sandbox, manual clock), and waits driven by its results — never by sleeping.
 */
import type { TestContext } from 'node:test';
import { Daemon } from '../../src/daemon/daemon.js';
import type { WakeResult } from '../../src/core/run/wake-api.js';
import type { Bench } from './run.js';
import { beforeHomeRemoved } from './home.js';

export interface TestDaemon {
  d: Daemon;
  lines: string[];
  /** Resolves with the first result (past or future) that matches; fails after `ms` of real time. */
  result(pred: (r: WakeResult) => boolean, ms?: number): Promise<WakeResult>;
  /** Resolves once `cond` holds, checked after every run; fails after `ms`. */
  until(cond: () => boolean, ms?: number): Promise<void>;
}

export async function startDaemon(t: TestContext, b: Pick<Bench, 'rt'>, o: { concurrency?: number; sweepMs?: number; poll?: boolean; pollIntervalMs?: number } = {}): Promise<TestDaemon> {
  const lines: string[] = [];
  const d = new Daemon(b.rt, { concurrency: o.concurrency ?? 4, poll: o.poll ?? false, ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}), sweepMs: o.sweepMs ?? 30_000, json: true, write: (l) => lines.push(l) });
  // stop() is idempotent: the first call, before the home is removed, is the one that does it.
  beforeHomeRemoved(t, () => d.stop());
  t.after(() => d.stop());
  await d.start();
  const waitFor = <T>(check: () => T | undefined, ms: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const first = check();
      if (first !== undefined) return resolve(first);
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; runs so far: ${JSON.stringify(d.results.map((r) => [r.session_id.slice(-6), r.trigger, r.status, r.stop_reason?.type]))}`));
      }, ms);
      const off = d.onResult(() => {
        const v = check();
        if (v !== undefined) {
          clearTimeout(timer);
          off();
          resolve(v);
        }
      });
    });
  return {
    d,
    lines,
    result: (pred, ms = 15_000) => waitFor(() => d.results.find(pred), ms, 'a matching run'),
    until: (cond, ms = 15_000) => waitFor(() => (cond() ? true : undefined), ms, 'the condition').then(() => undefined),
  };
}
