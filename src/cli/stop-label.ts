/**
 * Why a session stopped, as people read it in `sessions` and `status`. The
 * log's stop reason is Managed Agents' (`retries_exhausted` covers every
 * error that ends a turn); the label adds what it hides: an error that was
 * never retried (a 401, a 400) is shown as the error it is, not as retries
 * used up, and an error that was retried until the run gave up names its code.
 */
import type { SessionSnapshot } from '../core/schema/index.js';

export function stopLabel(s: Pick<SessionSnapshot, 'stop_reason' | 'last_error'>): string {
  const stop = s.stop_reason?.type ?? '';
  if (stop !== 'retries_exhausted' || !s.last_error) return stop;
  const code = s.last_error.code ?? s.last_error.type;
  if (s.last_error.retry === 'terminal') return `error: ${code} (not retried)`;
  return `retries_exhausted: ${code}`;
}
