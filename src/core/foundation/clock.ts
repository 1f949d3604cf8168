/**
 * Time as a dependency. Production uses the system clock; tests pass a manual
 * clock and fast-forward it, so nothing waits on real time for something a
 * clock can tell.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  setTimer(ms, fn) {
    // setTimeout overflows past 2^31-1 ms (~24.8 days): re-arm in steps.
    const MAX = 2 ** 31 - 1;
    let t: NodeJS.Timeout;
    const arm = (left: number) => {
      t = setTimeout(() => (left > MAX ? arm(left - MAX) : fn()), Math.min(Math.max(0, left), MAX));
    };
    arm(ms);
    return () => clearTimeout(t);
  },
};

export const iso = (ms: number) => new Date(ms).toISOString();
