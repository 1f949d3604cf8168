/**
 * events.jsonl is versioned by its first line's `format`. A log from before
 * formats (format 0, tests/fixtures/log-format-0: a real session written by
 * that code) reads exactly as it did; a log newer than this code is refused
 * with unsupported_log_format and left untouched, not misread or run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { LOG_FORMAT } from '../../src/core/schema/index.js';
import { STEPS, logFormatOf, migrateEvent, type MigrationStep } from '../../src/core/store/migrations.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { wake } from '../../src/core/run/wake.js';
import { REPO, tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

const FIXTURE = path.join(REPO, 'tests', 'fixtures', 'log-format-0');
const OLD_ID = '01a206ed-f620-72c0-a5b0-6387ee72e158';

/** A temp home holding a copy of the format-0 session. */
function withOldSession(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const dir = path.join(h.root, 'sessions', OLD_ID);
  fs.cpSync(path.join(FIXTURE, OLD_ID), dir, { recursive: true });
  const deps = testDeps();
  return { h, deps, store: new SessionStore(h.home, deps), dir, events: path.join(dir, 'events.jsonl') };
}

test('a new session writes the current log format on its first line', (t) => {
  const h = tempHome(t);
  const store = new SessionStore(h.home, testDeps());
  const s = createSession(store, { agent: 'demo' });
  const first = JSON.parse(fs.readFileSync(store.paths(s.id).events, 'utf8').split('\n')[0]!);
  assert.equal(first.type, 'session.created');
  assert.equal(first.format, LOG_FORMAT);
  assert.equal(store.logFormat(s.id), LOG_FORMAT);
  assert.equal(STEPS.length, LOG_FORMAT, 'one migration step per format before the current one');
});

test('a format-0 log (no format on its first line) folds exactly as the code that wrote it folded it', (t) => {
  const { store, dir, deps } = withOldSession(t);
  assert.equal(store.logFormat(OLD_ID), 0);
  const then = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'session-as-format-0-code-folded-it.json'), 'utf8'));
  const now = store.snapshot(OLD_ID);
  // Only the files' inodes differ (the fixture is a copy), and today's fold keeps the format it read.
  for (const j of ['events', 'wake_queue'] as const) then.journals[j].ino = now.journals[j].ino;
  assert.equal(now.log_format, 0);
  // session.json's own format moved on (2 added outcomes and compaction; then `paused`, delegation, `reports_wait`, `archived_at`, `context_cut`, the tree's limits and interrupts, `metadata`); that log has none of them.
  const { log_format: _kept, format: _format, outcome, pending_outcomes, outcome_evaluations, compaction, context_warned, context_cut, paused, archived_at, depth, tree_max_depth, children, delivered_messages, tree_usage, reports_wait, tree_max_sessions, tree_max_spawns_per_minute, last_interrupt_at, mandate_at, spawn_refusals, metadata, ...rest } = now;
  assert.equal(context_cut, null);
  assert.equal(paused, null);
  assert.equal(archived_at, null);
  assert.deepEqual(metadata, {});
  assert.equal(reports_wait, false);
  assert.deepEqual([depth, tree_max_depth, children, delivered_messages, tree_usage.input_tokens], [0, null, {}, [], now.usage.input_tokens]);
  assert.deepEqual([tree_max_sessions, tree_max_spawns_per_minute, last_interrupt_at, spawn_refusals], [null, null, null, { count: 0, last: null }]);
  // When it was last asked for something: its newest message, a hand-written one (no created_at) at the time the fold read it.
  const asked = readLines(path.join(dir, 'events.jsonl')).lines.map((l) => JSON.parse(l.text)).filter((e) => e.type === 'user.message').map((e) => Date.parse(e.created_at ?? new Date(deps.clock.now()).toISOString()));
  assert.equal(mandate_at, new Date(Math.max(...asked)).toISOString());
  const { format: _then, ...before } = then;
  // usage.cost_usd came later still (costs are recorded since): a log that records none costs 0.
  const { cost_usd, ...usage } = rest.usage;
  assert.equal(cost_usd, 0);
  // And a pending revisit's `recurrence` (recurring revisits came later): that log's are one-shot.
  const pending_wakes = rest.pending_wakes.map(({ recurrence, ...w }) => {
    assert.equal(recurrence, null);
    return w;
  });
  assert.deepEqual({ ...rest, usage, pending_wakes }, before);
  assert.deepEqual([outcome, pending_outcomes, outcome_evaluations, compaction, context_warned], [null, [], [], null, []]);
  assert.equal(fs.existsSync(path.join(dir, 'session.json')), true);
});

test('a format-0 line reads the same as it is written: the 0 to 1 step changes nothing', (t) => {
  const { store, events } = withOldSession(t);
  const raw = readLines(events).lines;
  const read = store.readEvents(OLD_ID);
  assert.equal(read.lines.length, raw.length);
  for (const [i, l] of read.lines.entries()) {
    assert.equal(l.kind, 'event', `line ${i + 1}`);
    if (l.kind !== 'event') continue;
    const written = JSON.parse(raw[i]!.text);
    // A runtime line, as written; the hand-written line gets only its derived id and time.
    if (written.id) assert.deepEqual(l.event, written, `line ${i + 1}`);
    else assert.deepEqual([l.event.id, l.event.type], ['sevt_line_3', 'user.message']);
    assert.deepEqual(parseEventLine(raw[i]!, 0, 0), parseEventLine(raw[i]!, 0, LOG_FORMAT), `line ${i + 1}: the same under either format`);
  }
  assert.equal('format' in (read.lines[0] as { event: object }).event, false, 'no format is made up for an old log');
});

test('a log of a newer format is refused with unsupported_log_format, read by nothing, run by nothing, written to by nothing', async (t) => {
  const { h, deps, store, dir, events } = withOldSession(t);
  const lines = fs.readFileSync(events, 'utf8').split('\n');
  lines[0] = JSON.stringify({ ...JSON.parse(lines[0]!), format: LOG_FORMAT + 1 });
  fs.writeFileSync(events, lines.join('\n'));
  fs.appendFileSync(events, `${JSON.stringify({ type: 'user.message', content: 'written by a newer openboa', format_2_field: { x: 1 } })}\n`);
  const before = new Map(fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).isFile() ? fs.readFileSync(path.join(dir, f), 'utf8') : null]));
  const refused = (e: unknown) => {
    assert.ok(OpenboaError.is(e));
    assert.equal(e.code, 'unsupported_log_format');
    assert.deepEqual(e.data, { format: LOG_FORMAT + 1, supported: LOG_FORMAT });
    assert.match(e.message, new RegExp(`${OLD_ID}.*log format ${LOG_FORMAT + 1}, newer than this version of openboa reads`));
    return true;
  };
  assert.throws(() => store.logFormat(OLD_ID), refused);
  assert.throws(() => store.snapshot(OLD_ID), refused);
  assert.throws(() => store.readEvents(OLD_ID), refused);
  await assert.rejects(wake({ home: h.home, store, deps }, OLD_ID), refused);
  assert.throws(() => store.appendUserEvent(OLD_ID, { type: 'user.message', content: [{ type: 'text', text: 'in the old format' }] }), refused);
  assert.throws(() => store.scheduleWake(OLD_ID, { due_at: '2026-11-21T10:00:00.000Z', reason: 'later', source: 'cli' }), refused);
  assert.throws(() => store.settleWakes(OLD_ID, 'wake.cancelled', ['wake_x'], { reason: 'no' }), refused);
  const after = new Map(fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).isFile() ? fs.readFileSync(path.join(dir, f), 'utf8') : null]));
  assert.deepEqual(after, before, 'no line appended, no session.json written');
});

test('a first line whose format is not a format is refused the same way', () => {
  for (const bad of ['"1"', '-1', '1.5', 'null']) {
    assert.throws(
      () => logFormatOf(`{"type":"session.created","format":${bad}}`, 'the log'),
      (e: unknown) => OpenboaError.is(e) && e.code === 'unsupported_log_format' && e.data.format === bad && e.data.supported === LOG_FORMAT,
      bad,
    );
  }
  assert.equal(logFormatOf('not json', 'the log'), 0, 'a bad first line is a bad line of a format-0 log, reported as such');
  assert.equal(logFormatOf(null, 'the log'), 0);
});

test('migrations run in order from the log format to the current one, and the schema judges the result', () => {
  // A made-up history: format 1 named user text `body`; format 2 calls it `content` (as today's schema does).
  const steps: MigrationStep[] = [(e) => e, (e) => (e.type === 'user.message' && 'body' in e ? (({ body, ...rest }) => ({ ...rest, content: body }))(e) : e)];
  const old = { type: 'user.message', body: 'hello' };
  assert.deepEqual(migrateEvent(old, 1, steps), { type: 'user.message', content: 'hello' });
  assert.deepEqual(migrateEvent(old, 0, steps), { type: 'user.message', content: 'hello' });
  assert.deepEqual(migrateEvent(old, 2, steps), old, 'a line of the current format is left alone');
  assert.deepEqual(old, { type: 'user.message', body: 'hello' }, 'the parsed object is not changed in place');
  assert.equal(logFormatOf('{"format":2}', 'the log', steps.length), 2);
  // Today's only step is the identity, so a line reads the same from any known format.
  const raw = { no: 2, text: '{"type":"user.message","content":"hi","created_at":"2026-11-21T10:00:00.000Z"}', bytes: 0, oversize: false, badUtf8: false };
  assert.deepEqual(parseEventLine(raw, 0, 0), parseEventLine(raw, 0));
});

test('a continued fold keeps the format it read; a replaced log is read again', (t) => {
  const { store, events } = withOldSession(t);
  assert.equal(store.snapshot(OLD_ID).log_format, 0);
  // The first line is read once per file: rewriting it in place (same file) is not seen by a continued fold...
  const text = fs.readFileSync(events, 'utf8');
  fs.appendFileSync(events, '{"type":"user.message","content":"more"}\n');
  assert.equal(store.snapshot(OLD_ID).log_format, 0);
  // ...but a new file (another inode) is folded from scratch, its first line read again.
  const lines = text.split('\n');
  const first = JSON.parse(lines[0]!);
  fs.writeFileSync(`${events}.new`, [JSON.stringify({ ...first, format: 1 }), ...lines.slice(1)].join('\n'));
  fs.renameSync(`${events}.new`, events);
  assert.equal(store.snapshot(OLD_ID).log_format, 1);
});
