import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import { bench, textOf } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { beforeHomeRemoved } from '../helpers/home.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { CLI } from '../helpers/cli.js';
import { validateLog } from '../helpers/event-schema.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

const processedIds = (ev: SessionEvent[]) => ev.flatMap((e) => (e.type === 'session.status_running' ? e.processed_event_ids : []));

test('a raw append is noticed and run; the run is logged for the operator and in activations.jsonl', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hello back' }] });
  const id = b.session();
  const td = await startDaemon(t, b);
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"hello"}\n');
  const r = await td.result((x) => x.session_id === id);
  assert.equal(r.trigger, 'event');
  assert.deepEqual(r.processed_event_ids, ['sevt_line_2']);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const ops = td.lines.map((l) => JSON.parse(l));
  assert.deepEqual(ops.filter((o) => o.session_id === id).map((o) => o.kind), ['run_start', 'run_end']);
  assert.equal(ops.find((o) => o.kind === 'run_end').stop_reason.type, 'end_turn');
  const acts = fs.readFileSync(`${b.store.paths(id).runtime}/activations.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(acts.map((a) => a.kind), ['leased', 'acked']);
  assert.equal(acts[1].wake_id, r.wake_id);
});

test('a due revisit fires when the clock reaches due_at, and is consumed once', async (t) => {
  const b = await bench(t, { steps: [{ text: 'revisited' }] });
  const id = b.session();
  const due = b.deps.clock.now() + 60_000;
  const w = b.store.scheduleWake(id, { due_at: new Date(due).toISOString(), reason: 'look again', source: 'agent' });
  const td = await startDaemon(t, b);
  assert.equal(td.d.results.length, 0, 'not before it is due');
  await b.deps.clock.advance(59_999);
  assert.equal(td.d.activeRuns + td.d.results.length, 0);
  await b.deps.clock.advance(1);
  const r = await td.result((x) => x.session_id === id);
  assert.equal(r.trigger, 'wake_queue');
  assert.deepEqual(r.wakes_consumed, [w.id]);
  assert.match(JSON.stringify(b.fake.requests[0]!.body.messages), /look again/);
  const queue = fs.readFileSync(b.store.paths(id).wakeQueue, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(queue.filter((q) => q.type === 'wake.consumed').length, 1);
});

test('wakes missed while no daemon ran fire once at start, coalesced into one run per session', async (t) => {
  const b = await bench(t, { steps: [{ text: 'caught up' }, { text: 'caught up too' }] });
  const a = b.session();
  const c = b.session();
  const past = (m: number) => new Date(b.deps.clock.now() - m * 60_000).toISOString();
  for (const m of [30, 20, 10]) b.store.scheduleWake(a, { due_at: past(m), reason: `missed ${m}`, source: 'agent' });
  b.store.scheduleWake(c, { due_at: past(5), reason: 'missed in c', source: 'cli' });
  const td = await startDaemon(t, b);
  await td.until(() => td.d.results.length === 2);
  const ra = td.d.results.find((r) => r.session_id === a)!;
  assert.equal(ra.wakes_consumed.length, 3);
  assert.equal(td.d.results.filter((r) => r.session_id === a).length, 1);
  assert.equal(b.store.snapshot(a).pending_wakes.length, 0);
  const sent = JSON.stringify(b.fake.requests.map((q) => q.body.messages));
  for (const m of ['missed 30', 'missed 20', 'missed 10', 'missed in c']) assert.equal(sent.split(m).length - 1, 1, m);
});

test('a bad line gets a session.error and the daemon goes on', async (t) => {
  const b = await bench(t, { steps: [{ text: 'fine' }] });
  const id = b.session();
  const td = await startDaemon(t, b);
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":\n');
  await td.until(() => b.events(id).some((e) => e.type === 'session.error'), 15_000);
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"after the bad line"}\n');
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const err = b.events(id).find((e) => e.type === 'session.error');
  assert.equal(err?.type === 'session.error' && err.line, 2);
});

test('8 concurrent appenders while the daemon runs: every message is taken in exactly once', { timeout: 120_000 }, async (t) => {
  const steps = Array.from({ length: 500 }, (_, i) => ({ text: `answer ${i}`, delayMs: 2 }));
  const b = await bench(t, { steps });
  const id = b.session();
  const td = await startDaemon(t, b);
  const log = b.store.paths(id).events;
  const PER = 25;
  const jobs: Array<Promise<number | null>> = [];
  for (let w = 0; w < 8; w++) {
    const proc =
      w % 2 === 0
        ? spawn(process.execPath, [CLI, '--home', b.h.root, 'send', id, '--lines'], { stdio: ['pipe', 'ignore', 'inherit'] })
        : spawn('bash', ['-c', `for i in $(seq 1 ${PER}); do echo "{\\"type\\":\\"user.message\\",\\"content\\":\\"w${w}-$i\\"}" >> '${log}'; sleep 0.01; done`], { stdio: ['pipe', 'ignore', 'inherit'] });
    if (w % 2 === 0) proc.stdin!.end(Array.from({ length: PER }, (_, i) => `w${w}-${i + 1}`).join('\n'));
    else proc.stdin!.end();
    jobs.push(new Promise((res) => proc.on('close', res)));
  }
  assert.deepEqual(await Promise.all(jobs), Array(8).fill(0));
  await td.until(() => {
    const s = b.store.snapshot(id, { persist: false });
    return s.pending_events.length === 0 && s.status === 'idle' && td.d.activeRuns === 0;
  }, 60_000);
  const ev = b.events(id);
  const messages = ev.filter((e) => e.type === 'user.message');
  assert.equal(messages.length, 8 * PER);
  const taken = processedIds(ev);
  assert.equal(taken.length, messages.length, 'each taken in once');
  assert.deepEqual(new Set(taken), new Set(messages.map((m) => m.id)));
  // and each entered the model's conversation exactly once
  const lastSent = b.fake.requests[b.fake.requests.length - 1]!.body.messages;
  const text = JSON.stringify(lastSent);
  for (const m of messages) {
    const body = textOf(m.type === 'user.message' ? m.content : []);
    assert.equal(text.split(`"${body}"`).length - 1, 1, body);
  }
  assert.equal(b.fake.unexpected, 0);
  assert.deepEqual(validateLog(log).errors, []);
});

test('single flight per session and the concurrency limit hold across many sessions', async (t) => {
  const steps = Array.from({ length: 12 }, () => ({ text: 'slow answer', delayMs: 15 }));
  const b = await bench(t, { steps });
  const ids = Array.from({ length: 6 }, () => b.session());
  const td = await startDaemon(t, b, { concurrency: 2 });
  for (const id of ids) {
    b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'one' }] });
    b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'two' }] });
  }
  await td.until(() => ids.every((id) => b.store.snapshot(id, { persist: false }).pending_events.length === 0 && b.store.snapshot(id, { persist: false }).status === 'idle') && td.d.activeRuns === 0, 30_000);
  let active = 0;
  let max = 0;
  const per = new Map<string, number>();
  for (const l of td.lines.map((x) => JSON.parse(x))) {
    if (l.kind === 'run_start') {
      active++;
      per.set(l.session_id, (per.get(l.session_id) ?? 0) + 1);
      assert.equal(per.get(l.session_id), 1, `session ${l.session_id} ran twice at once`);
    }
    if (l.kind === 'run_end') {
      active--;
      per.set(l.session_id, (per.get(l.session_id) ?? 0) - 1);
    }
    max = Math.max(max, active);
  }
  assert.ok(max <= 2, `max ${max} runs at once`);
  assert.ok(max >= 2, 'the limit was used');
});

test('waiting sessions run longest-waiting first, whatever their order in the scan', async (t) => {
  const b = await bench(t, { steps: [{ text: 'blocker', delayMs: 300 }, { text: 'one' }, { text: 'two' }] });
  const clock = b.deps.clock;
  const blocker = b.session('first in the scan, and slow');
  const recent = b.session();
  await clock.advance(60_000);
  const waitedLong = b.session('waiting for an hour');
  await clock.advance(3_600_000);
  b.store.appendUserEvent(recent, { type: 'user.message', content: 'just arrived' });
  // The scan goes newest-modified first: make it meet blocker, then recent, then waitedLong, so the
  // order of the runs after blocker's is the queue's (longest-waiting first), not the scan's.
  const at = Date.now() / 1000;
  [blocker, recent, waitedLong].forEach((id, i) => fs.utimesSync(b.store.paths(id).events, at - i * 10, at - i * 10));
  const td = await startDaemon(t, b, { concurrency: 1 });
  await td.until(() => td.d.results.filter((r) => r.outcome === 'executed').length >= 3);
  const order = td.d.results.filter((r) => r.outcome === 'executed').map((r) => r.session_id);
  assert.deepEqual(order, [blocker, waitedLong, recent]);
});

test('start: the scan gives way once it has queued a run, so the run opens before the scan looks at other sessions', async (t) => {
  const b = await bench(t, { steps: [{ text: 'first' }] });
  const idle = Array.from({ length: 100 }, () => b.session());
  const id = b.session('waiting while no daemon ran');
  // The scan meets the session with work first (newest-modified), then 100 idle ones.
  const at = Date.now() / 1000;
  idle.forEach((x) => fs.utimesSync(b.store.paths(x).events, at - 100, at - 100));
  let looked = 0;
  const snapshotAsync = b.rt.store.snapshotAsync.bind(b.rt.store);
  b.rt.store.snapshotAsync = (...a: Parameters<typeof snapshotAsync>) => {
    looked += 1;
    return snapshotAsync(...a);
  };
  let lookedAtRunStart = -1;
  const d = new Daemon(b.rt, {
    concurrency: 4,
    poll: false,
    sweepMs: 30_000,
    json: true,
    write: (l) => {
      if (JSON.parse(l).kind === 'run_start') lookedAtRunStart = looked;
    },
  });
  beforeHomeRemoved(t, () => d.stop());
  await d.start();
  assert.equal(lookedAtRunStart, 1, 'sessions the scan looked at before the run opened');
  assert.equal(looked, 101);
});
