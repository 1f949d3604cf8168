/**
 * The part every scripted model server on 127.0.0.1 shares: a queue of steps
 * answered one per request on one route, every request recorded in arrival
 * order (with `aborted` set when the client went away before the response
 * ended), waiters on the request count and on each connection's close, and a
 * loud failure (counted in `unexpected`) for a request that finds no step.
 * The provider's wire format (its errors and its stream) stays in the fake
 * that uses this: fake-anthropic.ts, fake-openai.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What every recorded request has; a fake adds its own typed body. */
export interface RecordedBase {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Set when the client went away before the response ended (abort). */
  aborted: boolean;
}

/** Answering one request: `index` is its place in `requests`; `isClosed` turns true once the client is gone. */
export interface Exchange<R> {
  rec: R;
  index: number;
  res: http.ServerResponse;
  isClosed: () => boolean;
}

export interface ScriptedServerOptions<S, B, R extends RecordedBase> {
  steps: S[];
  /** The scripted route, matched against the path without its query. */
  route: RegExp;
  /** Builds the record of a request on any route (parsed body; `{}` when the body was not JSON). */
  record: (base: Omit<RecordedBase, 'aborted'>, body: B) => R;
  /** Answers a request outside the script and returns true (it is then neither recorded nor counted). */
  aside?: (req: http.IncomingMessage, body: B, res: http.ServerResponse) => boolean;
  /** Writes an error in the provider's shape; `reason` says why for the message. */
  error: (res: http.ServerResponse, status: number, kind: 'not_found' | 'no_step', reason: string) => void;
  /** Answers a request with its step. */
  answer: (step: S, x: Exchange<R>) => void;
}

export interface ScriptedServer<S, R> {
  port: number;
  requests: R[];
  /** Requests that found no scripted step. */
  readonly unexpected: number;
  push(...steps: S[]): void;
  /** Resolves when `n` requests have arrived. */
  waitForRequests(n: number): Promise<void>;
  /** Resolves once the connection of request `i` has closed (then `aborted` is final). */
  closed(i: number): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedServer<S, B, R extends RecordedBase>(o: ScriptedServerOptions<S, B, R>): Promise<ScriptedServer<S, R>> {
  const queue = [...o.steps];
  const requests: R[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const closings: Array<Promise<void>> = [];
  let unexpected = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      let body: B;
      try {
        body = JSON.parse(raw || '{}') as B;
      } catch {
        body = {} as B;
      }
      if (o.aside?.(req, body, res)) return;
      const rec = o.record({ method: req.method ?? '', url: req.url ?? '', headers: req.headers }, body);
      requests.push(rec);
      const index = requests.length - 1;
      for (const w of waiters.filter((x) => requests.length >= x.n)) w.resolve();
      let closed = false;
      closings[index] = new Promise<void>((resolve) =>
        res.on('close', () => {
          if (!res.writableFinished) rec.aborted = true;
          closed = true;
          resolve();
        }),
      );
      if (req.method !== 'POST' || !o.route.test((req.url ?? '').split('?')[0] ?? '')) {
        o.error(res, 404, 'not_found', `no route ${req.method} ${req.url}`);
        return;
      }
      // A step marked `for` answers only the requests it accepts, and such a request takes it before any other:
      // two sessions asking at once (a parent and the child it spawned) each get their own answer, whoever asks first.
      const only = (x: S) => (x as { for?: (r: R) => boolean }).for;
      let at = queue.findIndex((x) => only(x)?.(rec) === true);
      if (at < 0) at = queue.findIndex((x) => only(x) === undefined);
      const step = at < 0 ? undefined : queue.splice(at, 1)[0];
      if (step === undefined) {
        unexpected += 1;
        o.error(res, 500, 'no_step', 'the fake server has no scripted step for this request');
        return;
      }
      o.answer(step, { rec, index, res, isClosed: () => closed });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    get unexpected() {
      return unexpected;
    },
    push: (...s) => queue.push(...s),
    closed: (i) => closings[i] ?? Promise.reject(new Error(`no request ${i}`)),
    waitForRequests: (n) => (requests.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
