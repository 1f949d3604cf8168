/**
 * A failure as the CLI reports it: one line on stderr (an
 * `{"error":{"code","message"}}` line under --json) and the exit code of
 * SPEC §8: 1 runtime failure, 2 bad usage or input, 3 not found, 4 busy.
 * The dispatcher (run.ts) and the one-shot send (send-lean.ts) report
 * through here.
 */
import type { OpenboaError } from '../core/foundation/errors.js';
import { UsageError } from './command.js';
import { EXIT } from './exit.js';
import type { Output } from './output.js';

/** A core error in the CLI's words: the field as its flag, the answer as the command that gives it. */
function cliWording(e: OpenboaError): string {
  const d = e.data;
  if (d.field) return `--${d.field} ${e.message}`;
  if (d.answer_with === 'confirm') return `${e.message}: openboa confirm ${d.session_id} ${d.event_id} --allow|--deny`;
  if (d.answer_with === 'tool-result') return `${e.message}: openboa tool-result ${d.session_id} ${d.event_id} <text>`;
  return e.message;
}

/** Reports `e` on `out`; returns the exit code. */
export async function reportError(out: Output, e: unknown): Promise<number> {
  if (e instanceof UsageError) {
    out.error('usage', e.message);
    return EXIT.usage;
  }
  // Loaded only now: an error from the core means the core is loaded already.
  const errors = await import('../core/foundation/errors.js');
  if (errors.OpenboaError.is(e)) {
    out.error(e.code, cliWording(e));
    switch (e.code) {
      case 'not_found':
        return EXIT.notFound;
      case 'busy':
        return EXIT.busy;
      case 'invalid_input':
        return EXIT.usage;
      default:
        return EXIT.failure;
    }
  }
  const err = e as Error;
  out.error('runtime_error', err?.message ?? String(e));
  return EXIT.failure;
}
