/**
 * Resolves once `pred` holds, checked every 5 ms; rejects after `ms`. For
 * what no event or clock can tell a test (a watcher's or a gate's inner
 * state); the bound ends a test that would never see it, it times nothing.
 */
export function until(pred: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (pred()) return resolve();
      if (Date.now() > deadline) return reject(new Error('timed out'));
      setTimeout(check, 5);
    };
    check();
  });
}
