/**
 * The few typed errors callers branch on. Each has a stable `code`; the CLI
 * maps codes to exit codes (SPEC §8). Everything else is a plain Error whose
 * message names the session and event involved.
 */
export type ErrorCode = 'not_found' | 'busy' | 'invalid_input' | 'budget_exhausted';

export class OpenboaError extends Error {
  readonly code: ErrorCode;
  /** Marker that survives realms and duplicate module copies. */
  readonly openboaError = true;
  /** For `busy`: when trying again can succeed, if that is known to be sooner than a stale lease (ms from now). */
  retryAfterMs?: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'OpenboaError';
  }

  static is(e: unknown): e is OpenboaError {
    return typeof e === 'object' && e !== null && (e as { openboaError?: unknown }).openboaError === true;
  }
}

export const notFound = (message: string) => new OpenboaError('not_found', message);
export const busy = (message: string) => new OpenboaError('busy', message);
export const invalidInput = (message: string, cause?: unknown) => new OpenboaError('invalid_input', message, { cause });
