/**
 * The few typed errors callers branch on. Each has a stable `code`; the CLI
 * maps codes to exit codes (SPEC §8). Everything else is a plain Error whose
 * message names the session and event involved.
 */
export type ErrorCode = 'not_found' | 'busy' | 'invalid_input' | 'budget_exhausted' | 'unsupported_log_format' | 'conflict';

export class OpenboaError extends Error {
  readonly code: ErrorCode;
  /** Marker that survives realms and duplicate module copies. */
  readonly openboaError = true;
  /** For `busy`: when trying again can succeed, if that is known to be sooner than a stale lease (ms from now). */
  retryAfterMs?: number;
  /**
   * What a caller may word for its own user: `field` (the input the message
   * is about, which a CLI names as its flag), `answer_with` ('confirm' or
   * 'tool-result', with `session_id` and `event_id`), `format` and
   * `supported` (for unsupported_log_format: the log's format and the newest
   * this code reads). Core messages never name a flag or a command.
   */
  readonly data: Readonly<Record<string, string | number>>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; data?: Record<string, string | number> }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.name = 'OpenboaError';
    this.data = options?.data ?? {};
  }

  static is(e: unknown): e is OpenboaError {
    return typeof e === 'object' && e !== null && (e as { openboaError?: unknown }).openboaError === true;
  }
}

export const notFound = (message: string) => new OpenboaError('not_found', message);
export const busy = (message: string) => new OpenboaError('busy', message);
/** A change made against a state that is no longer the current one (a stale version), or a name already taken. */
export const conflict = (message: string) => new OpenboaError('conflict', message);
export const invalidInput = (message: string, cause?: unknown, data?: Record<string, string>) => new OpenboaError('invalid_input', message, { cause, ...(data ? { data } : {}) });
/** Bad input about one field: the message says what is wrong with it, without naming how a caller spelled it. */
export const invalidField = (field: string, message: string) => new OpenboaError('invalid_input', message, { data: { field } });
/**
 * A log written in a format newer than this code reads (or with a `format`
 * that is not one): the session is not read rather than misread.
 */
export const unsupportedLogFormat = (message: string, format: number | string, supported: number) =>
  new OpenboaError('unsupported_log_format', message, { data: { format, supported } });
