/**
 * Why the last run failed, in words: the snapshot's last_error (status,
 * `--json` field last_error) and the daemon's run line say it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bench } from '../helpers/run.js';
import { cli } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { anthropicProvider } from '../../src/core/model/anthropic.js';

test('no API key: status says so, and a run that then succeeds clears it', async (t) => {
  const b = await bench(t, { steps: [{ text: 'now it works' }], env: { ANTHROPIC_API_KEY: '' } });
  const id = b.session('hello');
  await b.wake(id);
  const snap = b.store.snapshot(id);
  assert.equal(snap.last_error?.code, 'missing_api_key');
  assert.match(snap.last_error!.message, /no API key: set ANTHROPIC_API_KEY/);
  const st = await cli(['status', id], { home: b.h.root });
  assert.match(st.stdout, /^last error no API key: set ANTHROPIC_API_KEY/m);
  const js = JSON.parse((await cli(['status', id, '--json'], { home: b.h.root })).stdout);
  assert.equal(js.last_error.code, 'missing_api_key');
  assert.equal(snap.status, 'rescheduling', 'a key missing in this process is retried, not an ending');
  b.deps.env.ANTHROPIC_API_KEY = 'test-key';
  b.store.appendUserEvent(id, { type: 'user.message', content: 'again' });
  b.deps.clock.advance(10 * 60_000);
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.store.snapshot(id).last_error, null);
});

test('401: the error says authentication failed, where, and what to check', async (t) => {
  const b = await bench(t, { steps: [{ status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' }] });
  const id = b.session('hello');
  await b.wake(id);
  const e = b.store.snapshot(id).last_error!;
  assert.equal(e.code, 'http_401');
  assert.match(e.message, new RegExp(`^authentication failed \\(401\\) at ${b.fake.url.replace(/[.]/g, '\\.')}/?: invalid x-api-key; check ANTHROPIC_API_KEY$`));
});

test('an unreachable model API: the error names the URL and the cause (ECONNREFUSED)', async (t) => {
  const b = await bench(t);
  // a port nothing listens on: bound, then closed
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const url = `http://127.0.0.1:${port}`;
  b.deps.models = { anthropic: () => anthropicProvider({ env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: url }, maxRetries: 0 }) };
  const id = b.session('hello');
  const r = await b.wake(id);
  assert.equal(r.status, 'rescheduling');
  const e = b.store.snapshot(id).last_error!;
  assert.equal(e.code, 'connection_error');
  assert.match(e.message, new RegExp(`could not reach the model API at ${url}/?: ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
});

test('a definition that does not load: the error names the file and the field; the daemon line shows it', async (t) => {
  const b = await bench(t);
  const id = b.session('hello');
  b.h.write('agents/test/agent.yaml', 'provider: anthropic\nlimits:\n  max_wake_seconds: soon\n');
  const td = await startDaemon(t, b);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(r.status, 'rescheduling');
  const e = b.store.snapshot(id).last_error!;
  assert.equal(e.code, 'invalid_definition');
  assert.match(e.message, /agents\/test\/agent\.yaml:3: limits\.max_wake_seconds: .*expected number/);
  const end = td.lines.map((l) => JSON.parse(l)).find((l) => l.kind === 'run_end' && l.session_id === id);
  assert.match(end.last_error, /agents\/test\/agent\.yaml:3: limits\.max_wake_seconds/);
});

test('sessions and status say what a stop hides: a 401 is an error never retried, not retries used up; a rescheduling session shows its retry time', async (t) => {
  const b = await bench(t, { steps: [{ status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' }, { status: 529, errorType: 'overloaded_error', message: 'overloaded' }] });
  const denied = b.session('hello');
  await b.wake(denied);
  const busy = b.session('hello');
  await b.wake(busy);
  const rows = (await cli(['sessions', '--json'], { home: b.h.root })).stdout.trim().split('\n').map((l) => JSON.parse(l));
  const row = (id: string) => rows.find((r: { id: string }) => r.id === id);
  assert.equal(row(denied).stop_reason, 'retries_exhausted', 'the log keeps Managed Agents\' stop reason');
  assert.equal(row(denied).stop, 'error: http_401 (not retried)');
  assert.equal(row(busy).status, 'rescheduling');
  assert.ok(row(busy).retry_at);
  const text = await cli(['sessions'], { home: b.h.root });
  assert.match(text.stdout, new RegExp(`${denied}.*error: http_401 \\(not retried\\)`));
  assert.match(text.stdout, new RegExp(`${busy}.*rescheduling.*${row(busy).retry_at.replace(/[.]/g, '\\.')} \\(retry\\)`));
  const st = await cli(['status', denied], { home: b.h.root });
  assert.match(st.stdout, /^status +idle \(error: http_401 \(not retried\)\)/m);
});
