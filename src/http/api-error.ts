/**
 * Errors of the HTTP API in the hosted API's envelope:
 * `{type: "error", error: {type, message}}` with the status the official
 * SDK maps to its error classes (400 BadRequestError … 529 OverloadedError).
 * A route throws ApiError; the server's error handler (apiErrorResponse)
 * writes it. Anything else thrown is a bug: a 500 `api_error` whose message
 * says nothing of the server's internals.
 *
 * The SDK retries 408, 409, 429 and 5xx on its own unless the response
 * says `x-should-retry: false`: a conflict (a stale version) and a
 * validation failure are never worth retrying, so those say so.
 */

import { OpenboaError } from '../core/foundation/errors.js';

/** The error types of the envelope, by the status they go with. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

const STATUS: Record<ApiErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly type: ApiErrorType,
    message: string,
    /** Whether the SDK should try the same request again (its default for the status otherwise). */
    readonly retry?: boolean,
  ) {
    super(message);
    this.status = STATUS[type];
  }
}

export const invalidRequest = (message: string) => new ApiError('invalid_request_error', message, false);
export const notFound = (what: string) => new ApiError('not_found_error', `${what} not found`, false);
export const conflict = (message: string) => new ApiError('conflict_error', message, false);

/** The envelope's body. */
export function errorBody(type: ApiErrorType, message: string): { type: 'error'; error: { type: ApiErrorType; message: string } } {
  return { type: 'error', error: { type, message } };
}

/** The envelope for anything thrown (as apiErrorResponse words it): for an `event: error` on a stream. */
export function apiErrorBodyOf(err: unknown): ReturnType<typeof errorBody> {
  const mapped = fromCoreError(err);
  const e = mapped instanceof ApiError ? mapped : new ApiError('api_error', 'internal server error');
  return errorBody(e.type, e.message);
}

/** The Response for anything a route threw: an ApiError (or a core error, fromCoreError) as itself, anything else as a 500 that hides its text. */
export function apiErrorResponse(err: unknown): Response {
  const mapped = fromCoreError(err);
  const e = mapped instanceof ApiError ? mapped : new ApiError('api_error', 'internal server error');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retry !== undefined) headers['x-should-retry'] = String(e.retry);
  return new Response(JSON.stringify(errorBody(e.type, e.message)), { status: e.status, headers });
}

/**
 * A core error (OpenboaError, by its code) as the API's: not_found 404,
 * invalid_input 400 (the field named first when the core names one), busy
 * and unsupported_log_format 409, budget_exhausted 400. Anything else is
 * returned as it is (a 500 unless it is an ApiError already).
 */
export function fromCoreError(e: unknown): unknown {
  if (!OpenboaError.is(e)) return e;
  switch (e.code) {
    case 'not_found':
      return new ApiError('not_found_error', e.message, false);
    case 'invalid_input': {
      const field = e.data.field;
      return invalidRequest(field !== undefined && !e.message.startsWith(`${field}`) ? `${field}: ${e.message}` : e.message);
    }
    case 'busy':
    case 'unsupported_log_format':
      return conflict(e.message);
    case 'budget_exhausted':
      return invalidRequest(e.message);
  }
}
