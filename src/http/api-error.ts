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

/** The Response for anything a route threw: an ApiError as itself, anything else as a 500 that hides its text. */
export function apiErrorResponse(err: unknown): Response {
  const e = err instanceof ApiError ? err : new ApiError('api_error', 'internal server error');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retry !== undefined) headers['x-should-retry'] = String(e.retry);
  return new Response(JSON.stringify(errorBody(e.type, e.message)), { status: e.status, headers });
}
