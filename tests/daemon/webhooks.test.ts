/**
 * Webhooks against a real HTTP receiver on 127.0.0.1: signed deliveries,
 * retries on the injected clock, restarts that neither drop nor repeat a
 * delivery, and a receiver that never answers holding up no run.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { bench, type Bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { WebhookDispatcher } from '../../src/daemon/webhook-dispatcher.js';
import { verifySignature } from '../../src/core/webhooks/webhook-delivery.js';
import { loadHomeConfig } from '../../src/core/definitions/home-config.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver answering each request with the next status of `answers` ('hang': never), then 200. */
async function receiver(t: TestContext, answers: Array<number | 'hang'>) {
  const got: Received[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      for (const w of waiters.filter((x) => got.length >= x.n)) w.resolve();
      const a = answers.shift() ?? 200;
      if (a !== 'hang') res.writeHead(a).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    nth: (n: number) => (got.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
  };
}

const SECRET = `whsec_${Buffer.from('a signing key of thirty-two bytes').toString('base64')}`;

function configure(b: Bench, url: string) {
  b.h.write('openboa.yaml', `# deliveries for the tests\nwebhooks:\n  - name: ops\n    url: ${url}\n    events: [session.status_idle]\n    secret: { secret: { env: WEBHOOK_SECRET } }\n`);
  b.deps.env.WEBHOOK_SECRET = SECRET;
}

function dispatcher(b: Bench, notices: string[] = []) {
  return new WebhookDispatcher({ rt: b.rt, sweepMs: 3_600_000, notice: (m) => notices.push(m) });
}

function journal(b: Bench): Array<Record<string, unknown>> {
  return fs
    .readFileSync(path.join(b.h.root, 'webhooks/deliveries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('a delivery is signed, retried after a 500 with backoff, caught up after a restart, and never sent again once delivered', async (t) => {
  const b = await bench(t, { steps: [{ text: 'done' }] });
  const r = await receiver(t, [500]);
  configure(b, r.url);
  // The webhook is subscribed from the first start; the run then happens while no daemon is running.
  const first = dispatcher(b);
  await first.start();
  first.stop();
  const sid = b.session('hello');
  await b.wake(sid);

  const second = dispatcher(b);
  await second.start();
  await r.nth(1);
  await second.idle();
  const one = r.got[0]!;
  assert.ok(verifySignature(SECRET, String(one.headers['webhook-id']), String(one.headers['webhook-timestamp']), one.body, String(one.headers['webhook-signature'])), 'the signature verifies');
  assert.ok(!verifySignature(SECRET, String(one.headers['webhook-id']), String(one.headers['webhook-timestamp']), one.body.replace('end_turn', 'refusal'), String(one.headers['webhook-signature'])), 'a changed body does not');
  const body = JSON.parse(one.body) as { type: string; session_id: string; event: { stop_reason: { type: string } } };
  assert.equal(body.type, 'session.status_idle');
  assert.equal(body.session_id, sid);
  assert.equal(body.event.stop_reason.type, 'end_turn');
  assert.equal(one.headers['openboa-attempt'], '1');
  const failed = journal(b).find((l) => l.op === 'result');
  assert.equal(failed?.ok, false);
  assert.equal(failed?.status, 500);
  // random 1: the first retry waits 5 s less a quarter.
  assert.equal(Date.parse(String(failed?.next_at)) - b.deps.clock.now(), 3750);
  second.stop();

  // Restarted before the retry is due: nothing is sent early, then the retry goes out on time.
  const third = dispatcher(b);
  await third.start();
  await third.idle();
  assert.equal(r.got.length, 1);
  await b.deps.clock.advance(3750);
  await r.nth(2);
  await third.idle();
  assert.equal(r.got[1]!.headers['webhook-id'], one.headers['webhook-id'], 'the same delivery');
  assert.equal(r.got[1]!.headers['openboa-attempt'], '2');
  third.stop();

  const fourth = dispatcher(b);
  await fourth.start();
  await fourth.idle();
  fourth.stop();
  assert.equal(r.got.length, 2, 'a delivered event is not sent again');
  assert.deepEqual(journal(b).map((l) => `${l.op}${l.attempt ? `:${l.attempt}` : ''}${'ok' in l ? `:${l.ok}` : ''}`), ['subscribed', 'send:1', 'result:1:false', 'send:2', 'result:2:true']);
});

test('an attempt cut off by a crash is sent again with the same id and the next attempt number', async (t) => {
  const b = await bench(t, { steps: [{ text: 'done' }] });
  const r = await receiver(t, ['hang']);
  configure(b, r.url);
  const first = dispatcher(b);
  await first.start();
  const sid = b.session('hello');
  await b.wake(sid);
  first.hint(sid);
  await r.nth(1);
  first.stop(); // the daemon goes away mid-send: a `send` line with no result
  assert.deepEqual(journal(b).map((l) => l.op), ['subscribed', 'send']);

  const second = dispatcher(b);
  await second.start();
  await r.nth(2);
  await second.idle();
  second.stop();
  assert.equal(r.got[1]!.headers['webhook-id'], r.got[0]!.headers['webhook-id']);
  assert.equal(r.got[1]!.headers['openboa-attempt'], '2', 'the repeat says it is one');
});

test('in the daemon: events go out as runs end, and a receiver that never answers holds up no run', async (t) => {
  const b = await bench(t, { steps: [{ text: 'one' }, { text: 'two' }] });
  const r = await receiver(t, ['hang', 'hang']);
  configure(b, r.url);
  const td = await startDaemon(t, b);
  const a = b.session('first');
  await td.result((x) => x.session_id === a);
  await r.nth(1);
  // The first delivery hangs; another session runs to its end all the same, and its event goes out too.
  const c = b.session('second');
  const res = await td.result((x) => x.session_id === c);
  assert.equal(res.stop_reason?.type, 'end_turn');
  await r.nth(2);
  assert.deepEqual(r.got.map((g) => (JSON.parse(g.body) as { session_id: string }).session_id), [a, c]);
});

test('openboa.yaml: a bad webhook is refused naming the file, the line and the field', async (t) => {
  const b = await bench(t);
  b.h.write('openboa.yaml', 'webhooks:\n  - name: ops\n    url: ftp://example.com/\n    events: [session.status_idle]\n    secret: { secret: { env: S } }\n');
  assert.throws(() => loadHomeConfig(b.h.home), (e) => OpenboaError.is(e) && /^openboa\.yaml:3: webhooks\.0\.url: expected an http/.test(e.message));
  const notices: string[] = [];
  await dispatcher(b, notices).start();
  assert.match(notices.join('\n'), /webhooks off: openboa\.yaml:3: webhooks\.0\.url/);
  fs.rmSync(path.join(b.h.root, 'openboa.yaml'));
  assert.deepEqual(loadHomeConfig(b.h.home), { webhooks: [] });
});

test('only events a run wrote are delivered: a session.status_idle appended by hand is not', async (t) => {
  const b = await bench(t, { steps: [{ text: 'done' }] });
  const r = await receiver(t, []);
  configure(b, r.url);
  const d = dispatcher(b);
  await d.start();
  t.after(() => d.stop());
  const sid = b.session('hello');
  // A line written by hand, in the shape a run writes (a run id, a stop reason): the fold refuses it.
  const forged = { id: 'sevt_forged', type: 'session.status_idle', created_at: new Date(b.deps.clock.now()).toISOString(), wake_id: 'wrun_00000000000000000000000000000001', stop_reason: { type: 'end_turn' }, stop_details: null };
  fs.appendFileSync(b.store.paths(sid).events, `${JSON.stringify(forged)}\n`);
  d.hint(sid);
  await b.wake(sid);
  d.hint(sid);
  await r.nth(1);
  await new Promise((resolve) => setImmediate(resolve)); // the hint's read
  await d.idle();
  const sent = r.got.map((g) => (JSON.parse(g.body) as { event: { id: string } }).event.id);
  const real = b.events(sid).filter((e) => e.type === 'session.status_idle' && e.id !== 'sevt_forged').map((e) => e.id);
  assert.equal(real.length, 1);
  assert.deepEqual(sent, real, 'the run\'s idle only');
  // The run reported the forged line (a session.error naming it): it stays undelivered after that too.
  assert.ok(b.events(sid).some((e) => e.type === 'session.error' && (e as { line?: number }).line !== undefined));
  const again = dispatcher(b);
  fs.rmSync(path.join(b.h.root, 'webhooks/deliveries.jsonl'));
  await again.start();
  await again.idle();
  again.stop();
  assert.ok(r.got.every((g) => (JSON.parse(g.body) as { event: { id: string } }).event.id !== 'sevt_forged'));
});
