/** openboa wakes agrees with the session: what a run took in is not pending, even before its wake.consumed record. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

test('a revisit a run took in, whose run died before its wake.consumed record, shows as consumed, not due', async (t) => {
  const { root, home } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const store = new SessionStore(home, systemDeps({}));
  const taken = store.scheduleWake(id, { due_at: new Date(Date.now() - 1000).toISOString(), reason: 'taken, then the run died', source: 'agent' });
  const waiting = store.scheduleWake(id, { due_at: new Date(Date.now() + 3_600_000).toISOString(), reason: 'later', source: 'agent' });
  // the run lists the revisit it takes in, then dies before writing wake.consumed
  store.appendEvents(id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'wake_queue', processed_event_ids: [], wakes: [{ id: taken.id, reason: taken.reason, due_at: taken.due_at }] }], { wakeId: FIRST_RUN });
  const r = await cliInProcess(['wakes', id, '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as Array<{ id: string; state: string }>;
  assert.deepEqual(rows.map((w) => [w.id, w.state]), [[taken.id, 'consumed'], [waiting.id, 'pending']]);
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.deepEqual(st.pending_wakes.map((w: { id: string }) => w.id), [waiting.id], 'the same answer as the session');
});

test('wakes --json is one array ([] when there are none); schedule --in takes what people write ("5 minutes", "1 hour 30 minutes"); send - --lines reads stdin', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const none = await cliInProcess(['wakes', id, '--json'], { home: root });
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(JSON.parse(none.stdout), []);
  for (const [text, ms] of [['5 minutes', 300_000], ['1 hour 30 minutes', 5_400_000]] as const) {
    const r = await cliInProcess(['schedule', id, '--in', text, '--json'], { home: root });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    const due = Date.parse(rec.due_at) - Date.parse(rec.created_at);
    assert.ok(Math.abs(due - ms) < 1000, `${text}: due ${due} ms after creation`);
  }
  assert.equal(JSON.parse((await cliInProcess(['wakes', id, '--json'], { home: root })).stdout).length, 2);
  const sent = await cliInProcess(['send', id, '-', '--lines'], { home: root, input: 'one\ntwo\n' });
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(sent.stdout.trim().split('\n').length, 2);
});

test('schedule --every: a recurring revisit; wakes shows its rule and next firing, then how often it fired', async (t) => {
  const { root, home } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const r = await cliInProcess(['schedule', id, '--every', '1h', '--reason', 'check the build', '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  const rec = JSON.parse(r.stdout);
  assert.deepEqual(rec.recurrence, { every: 3600 });
  assert.equal(Date.parse(rec.due_at) - Date.parse(rec.created_at), 3_600_000, 'the first firing one interval from now');
  const rows = JSON.parse((await cliInProcess(['wakes', id, '--json'], { home: root })).stdout);
  assert.deepEqual(rows.map((w: Record<string, unknown>) => [w.id, w.state, w.due_at, w.recurrence, w.firings, w.last_firing]), [[rec.id, 'pending', rec.due_at, { every: 3600 }, 0, null]]);
  // A run takes the first firing in and consumes it.
  const store = new SessionStore(home, systemDeps({}));
  const firing = `${rec.id}@${rec.due_at}`;
  store.appendEvents(id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'wake_queue', processed_event_ids: [], wakes: [{ id: firing, reason: rec.reason, due_at: rec.due_at }] }], { wakeId: FIRST_RUN });
  store.settleWakes(id, 'wake.consumed', [firing], { wakeRunId: FIRST_RUN });
  const text = await cliInProcess(['wakes', id], { home: root, env: { COLUMNS: '300' } });
  assert.equal(text.code, 0, text.stderr);
  const next = new Date(Date.parse(rec.due_at) + 3_600_000).toISOString();
  assert.match(text.stdout, new RegExp(`${rec.id} +pending +${next} \\(next\\) +cli +check the build +every 1h; fired 1 time\\(s\\), last due ${rec.due_at} by ${FIRST_RUN}`));
});

test('schedule --cron reads the expression in --tz (default: this machine\'s zone, written into the line); --cancel stops it', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const r = await cliInProcess(['schedule', id, '--cron', '0 9 * * 1-5', '--tz', 'Europe/Berlin', '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  const rec = JSON.parse(r.stdout);
  assert.deepEqual(rec.recurrence, { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
  const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit' }).format(new Date(rec.due_at));
  assert.match(berlin, /^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
  const local = JSON.parse((await cliInProcess(['schedule', id, '--cron', '@daily', '--json'], { home: root })).stdout);
  assert.equal(local.recurrence.timezone, Intl.DateTimeFormat().resolvedOptions().timeZone);
  const c = await cliInProcess(['schedule', id, '--cancel', rec.id], { home: root });
  assert.equal(c.code, 0, c.stderr);
  assert.equal(c.stdout.trim(), `cancelled ${rec.id} and every firing to come`);
  const rows = JSON.parse((await cliInProcess(['wakes', id, '--json'], { home: root })).stdout);
  assert.deepEqual(rows.map((w: Record<string, unknown>) => [w.id, w.state, w.cancel_reason]), [[rec.id, 'cancelled', 'cancelled from the CLI'], [local.id, 'pending', null]]);
  const again = await cliInProcess(['schedule', id, '--cancel', rec.id], { home: root });
  assert.equal(again.code, 2);
  assert.match(again.stderr, new RegExp(`has no pending revisit ${rec.id} \\(pending: ${local.id}\\)`));
});

test('schedule refuses recurring input it cannot keep, naming the flag, and writes nothing', async (t) => {
  const { root, home } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const cases: Array<[string[], RegExp]> = [
    [['--every', '30s'], /--every at least 60 seconds \(1m\) between firings, got 30/],
    [['--every', '1h', '--cron', '@daily'], /give either --every DURATION or --cron EXPR, not both/],
    [['--tz', 'Europe/Berlin', '--in', '1h'], /--tz is the time zone of --cron: give --cron too/],
    [['--cron', '*/10 * * * * *'], /--cron "\*\/10 \* \* \* \* \*": expected 5 fields/],
    [['--cron', '0 9 * * *', '--tz', 'Nowhere/Land'], /--tz "Nowhere\/Land" is not a time zone/],
    [['--every', '1h', '--in', '5m', '--at', '2030-01-01T00:00:00Z'], /give at most one of --in DURATION or --at ISO/],
    [['--cancel', 'wake_x', '--every', '1h'], /--cancel takes no --every/],
  ];
  for (const [flags, want] of cases) {
    const r = await cliInProcess(['schedule', id, ...flags], { home: root });
    assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, flags.join(' '));
  }
  assert.equal(new SessionStore(home, systemDeps({})).readWakes(id).length, 0);
});
