/**
 * How a model call's failure becomes a ModelError, once for both official
 * SDKs. @anthropic-ai/sdk and openai are generated from the same template
 * (Stainless) and throw the same classes: APIError (with the HTTP `status`,
 * undefined for an error event inside an open stream, and `error`, the
 * response's error body), its subclasses APIConnectionError,
 * APIConnectionTimeoutError (a subclass of that) and APIUserAbortError. What
 * differs between the providers is a small ErrorDialect: the key a 401
 * points at, and which statuses mean overloaded.
 *
 * A reply arrives as a stream; readReplyStream reads it, and a stream that
 * breaks off before its last event is a retryable `stream_cut`, never a half
 * reply (docs/providers.md, "How failures map").
 */
import { ModelError } from './provider.js';

type ErrorClass<T> = abstract new (...args: never[]) => T;

/** The SDK's error classes; both SDKs export these four under these names (as statics of the client class too). */
export interface SdkErrorClasses {
  APIError: ErrorClass<Error & { status: number | undefined; error: unknown }>;
  APIConnectionError: ErrorClass<Error>;
  APIConnectionTimeoutError: ErrorClass<Error>;
  APIUserAbortError: ErrorClass<Error>;
}

/** What is particular to one provider's failures. */
export interface ErrorDialect {
  errors: SdkErrorClasses;
  /** Where the key comes from, named in a 401's message ("check …"). */
  keyHint: string;
  /**
   * The statuses that mean overloaded (model_overloaded_error): the Messages
   * API says it with 529; OpenAI-compatible servers (vLLM, gateways) with
   * 503 as well. Any other 5xx is a failed request, retryable all the same.
   */
  overloaded: readonly number[];
}

/**
 * Maps a failure of a model call to a ModelError (Managed Agents' error
 * types). A ModelError of our own (a bound, a cut stream) is kept as it is,
 * unless our signal aborted the call: then it is the abort. Never throws.
 */
export function classifyError(e: unknown, signal: AbortSignal, baseURL: string, d: ErrorDialect): ModelError {
  const E = d.errors;
  if (e instanceof ModelError && !signal.aborted) return e;
  const message = (e as Error)?.message ?? String(e);
  if (signal.aborted || e instanceof E.APIUserAbortError) {
    return new ModelError({ message: 'the model call was aborted', errorType: 'unknown_error', code: 'aborted', retryable: false, aborted: true, cause: e });
  }
  if (e instanceof E.APIConnectionTimeoutError) return new ModelError({ message: `the model call timed out: ${message}`, errorType: 'model_request_failed_error', code: 'timeout', retryable: true, cause: e });
  if (e instanceof E.APIConnectionError) {
    const why = networkCause(e);
    return new ModelError({ message: `could not reach the model API at ${baseURL}: ${why ?? message}`, errorType: 'model_request_failed_error', code: 'connection_error', retryable: true, cause: e });
  }
  if (e instanceof E.APIError) {
    const status = e.status;
    const { apiMsg, kind } = errorBody(e);
    if (status === undefined) {
      // An error event inside an open stream: the SDKs do not retry these, the run does.
      const overloaded = /overload/i.test(`${kind} ${apiMsg}`);
      return new ModelError({ message: `the model stream failed: ${apiMsg}`, errorType: overloaded ? 'model_overloaded_error' : 'model_request_failed_error', code: 'stream_error', retryable: true, cause: e });
    }
    // OpenAI answers an exhausted quota with a 429 that no wait will cure.
    if (status === 402 || (status === 429 && /insufficient_quota/.test(kind))) return new ModelError({ message: `billing (${status}): ${apiMsg}`, errorType: 'billing_error', code: `http_${status}`, retryable: false, status, cause: e });
    if (status === 429) return new ModelError({ message: `rate limited (429): ${apiMsg}`, errorType: 'model_rate_limited_error', code: 'http_429', retryable: true, status, cause: e });
    if (d.overloaded.includes(status)) return new ModelError({ message: `overloaded (${status}): ${apiMsg}`, errorType: 'model_overloaded_error', code: `http_${status}`, retryable: true, status, cause: e });
    if (status >= 500 || status === 408 || status === 409) return new ModelError({ message: `the model API failed (${status}): ${apiMsg}`, errorType: 'model_request_failed_error', code: `http_${status}`, retryable: true, status, cause: e });
    if (status === 401) return new ModelError({ message: `authentication failed (401) at ${baseURL}: ${apiMsg}; check ${d.keyHint}`, errorType: 'model_request_failed_error', code: 'http_401', retryable: false, status, cause: e });
    return new ModelError({ message: `the model API refused the request (${status}): ${apiMsg}`, errorType: 'model_request_failed_error', code: `http_${status}`, retryable: false, status, cause: e });
  }
  return new ModelError({ message: `the model call failed: ${message}`, errorType: 'unknown_error', code: 'unexpected', retryable: true, cause: e });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/**
 * The API's own message and kind (its error `code` and `type`) from an
 * APIError's `error`. The anthropic SDK keeps the whole body there
 * (`{type: 'error', error: {type, message}}`), the openai SDK the inner
 * object (`{message, type, code}`); without a message, the SDK's.
 */
function errorBody(e: { error: unknown; message: string }): { apiMsg: string; kind: string } {
  const outer = e.error;
  const inner = isRecord(outer) && isRecord(outer.error) ? outer.error : isRecord(outer) ? outer : {};
  return { apiMsg: typeof inner.message === 'string' ? inner.message : e.message, kind: `${str(inner.code)} ${str(inner.type)}` };
}

/** A reply stream that broke off before its last event: retryable (a retry asks again), and no half reply. */
export function streamCut(why: string, cause?: unknown): ModelError {
  return new ModelError({ message: `the model stream was cut off before the reply was complete: ${why}`, errorType: 'model_request_failed_error', code: 'stream_cut', retryable: true, cause });
}

/**
 * Reads a reply stream to its end, giving each event to `add`. An error
 * event (the SDK's APIError), our own ModelError (`add` may throw one) and
 * our abort are thrown as they are; any other failure of the read (the
 * connection reset, an event that is not JSON) is streamCut. Both SDKs end
 * an aborted stream quietly, as if it were complete: that is the abort too.
 * Whether the stream reached its last event is the caller's to check.
 */
export async function readReplyStream<T>(stream: AsyncIterable<T>, add: (event: T) => void, signal: AbortSignal, errors: SdkErrorClasses): Promise<void> {
  try {
    for await (const event of stream) add(event);
  } catch (e) {
    if (signal.aborted || e instanceof ModelError || e instanceof errors.APIError) throw e;
    throw streamCut(describe(e), e);
  }
  if (signal.aborted) throw signal.reason;
}

/** An error's message and its cause's ("terminated (other side closed)"). */
function describe(e: unknown): string {
  const msg = (x: unknown) => (x instanceof Error ? x.message : String(x));
  const cause = e instanceof Error ? e.cause : undefined;
  return cause === undefined ? msg(e) : `${msg(e)} (${networkCause(cause) ?? msg(cause)})`;
}

/**
 * The system-level reason under an SDK connection error ("Connection error."
 * wraps fetch's "fetch failed", which wraps e.g. ECONNREFUSED 127.0.0.1:9):
 * the first error code found down the cause chain, with its address.
 */
export function networkCause(e: unknown): string | null {
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 6; depth++) {
    const x = cur as { code?: unknown; address?: unknown; port?: unknown; hostname?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof x.code === 'string' && /^E[A-Z_]+$/.test(x.code)) {
      const where = typeof x.address === 'string' ? ` ${x.address}${typeof x.port === 'number' ? `:${x.port}` : ''}` : typeof x.hostname === 'string' ? ` ${x.hostname}` : '';
      return `${x.code}${where}`;
    }
    // happy eyeballs: an AggregateError of one error per address
    if (Array.isArray(x.errors) && x.errors.length) cur = x.errors[0];
    else cur = x.cause;
  }
  return null;
}
