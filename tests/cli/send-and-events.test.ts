/**
 * `send` says when a message cannot be acted on yet (and still appends it);
 * `events` clips its compact view to the terminal's width and prints
 * everything whole with --full (issue 11, item 7).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import stringWidth from 'string-width';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { bench } from '../helpers/run.js';
import { FIRST_RUN } from '../helpers/run-ids.js';
import { lockHome } from '../../src/daemon/home-lock.js';
import { systemClock } from '../../src/core/foundation/clock.js';

const messages = (root: string, id: string) =>
  fs
    .readFileSync(path.join(root, 'sessions', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === 'user.message')
    .map((e) => e.content[0].text);

test('send with no daemon on the home says so on stderr, appends, and exits 0; with a daemon it says nothing', async (t) => {
  const h = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: h.root })).stdout.trim();
  const r = await cliInProcess(['send', id, 'anyone there?'], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^sevt_/);
  assert.match(r.stderr, /^openboa: note: no daemon is running on this home \(.*\): the message waits until one starts \(openboa daemon\), or run the session once now \(openboa wake .*\)\n$/);
  const json = await cliInProcess(['send', id, 'and now?', '--json'], { home: h.root });
  assert.equal(json.code, 0);
  assert.equal(json.stderr, '', '--json puts the notes in the result');
  assert.match(JSON.parse(json.stdout).notes[0], /no daemon is running on this home/);

  // A daemon holds the home's lock (here: this test process, alive).
  const lock = await lockHome(h.home, systemClock);
  t.after(() => lock.release());
  const quiet = await cliInProcess(['send', id, 'now with a daemon'], { home: h.root });
  assert.equal(quiet.code, 0);
  assert.equal(quiet.stderr, '');
  assert.deepEqual(JSON.parse((await cliInProcess(['send', id, 'json too', '--json'], { home: h.root })).stdout).notes, []);
  assert.deepEqual(messages(h.root, id), ['anyone there?', 'and now?', 'now with a daemon', 'json too']);
});

test('send to a session waiting on answers, or terminated, says so and still appends', async (t) => {
  const b = await bench(t, { agent: { tools: { write: { permission: 'always_ask' } } }, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }] });
  const waiting = b.session('write it');
  await b.wake(waiting);
  assert.equal(b.store.snapshot(waiting).counts.requires_action, 1);
  const r = await cliInProcess(['send', waiting, 'also this'], { home: b.h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`openboa: note: session ${waiting} is waiting on 1 answer \\(openboa status ${waiting} lists them\\); the message is taken in once they are answered`));
  assert.match(r.stderr, /no daemon is running/);
  assert.deepEqual(messages(b.h.root, waiting), ['write it', 'also this']);

  const ended = b.session();
  b.store.appendEvents(
    ended,
    [
      { type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'manual', processed_event_ids: [] },
      { type: 'session.status_terminated', reason: 'done for good' },
    ],
    { wakeId: FIRST_RUN },
  );
  const t2 = await cliInProcess(['send', ended, 'hello?'], { home: b.h.root });
  assert.equal(t2.code, 0, t2.stderr);
  assert.equal(t2.stderr, `openboa: note: session ${ended} is terminated: the message is in its log, but no run will take it in\n`);
  assert.deepEqual(messages(b.h.root, ended), ['hello?']);
  const lines = await cliInProcess(['send', ended, '--lines'], { home: b.h.root, input: 'one\ntwo\n' });
  assert.equal(lines.code, 0);
  assert.match(lines.stderr, /is terminated/);
});

test('events clips each line to the width ($COLUMNS, else 100 off a terminal); --full prints messages whole', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const long = `${'word '.repeat(60)}END\nsecond line`;
  const wide = '漢字'.repeat(80);
  const f = path.join(root, 'sessions', id, 'events.jsonl');
  fs.appendFileSync(f, `${JSON.stringify({ type: 'user.message', content: long })}\n${JSON.stringify({ type: 'user.message', content: wide })}\n`);

  const widths = (out: string) => out.trimEnd().split('\n').map((l) => stringWidth(l));
  const plain = await cliInProcess(['events', id], { home: root, env: { COLUMNS: '' } });
  assert.equal(plain.code, 0, plain.stderr);
  assert.ok(widths(plain.stdout).every((w) => w <= 100), `lines fit 100 columns: ${widths(plain.stdout)}`);
  const rows = plain.stdout.trimEnd().split('\n');
  assert.equal(rows.length, 3, 'one line per event');
  assert.match(rows[1]!, /^ {4}2 {2}\d\d-\d\d \d\d:\d\d:\d\dZ {2}user\.message {14}word word .*…$/);
  assert.match(rows[2]!, /漢字…$/);
  assert.doesNotMatch(plain.stdout, /END/);

  const narrow = await cliInProcess(['events', id], { home: root, env: { COLUMNS: '60' } });
  assert.ok(widths(narrow.stdout).every((w) => w <= 60), `lines fit 60 columns: ${widths(narrow.stdout)}`);

  const full = await cliInProcess(['events', id, '--full'], { home: root, env: { COLUMNS: '60' } });
  assert.equal(full.code, 0);
  assert.ok(full.stdout.includes(`${'word '.repeat(60)}END\n       second line (pending)`), 'the whole message, its second line indented');
  assert.ok(full.stdout.includes(wide));
  assert.match(full.stdout, /^ {4}1 {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}session\.created {13}sevt_\w+ {2}agent demo/, 'full timestamps and event ids');
  const json = await cliInProcess(['events', id, '--json'], { home: root, env: { COLUMNS: '60' } });
  assert.equal(JSON.parse(json.stdout.trim().split('\n')[1]!).event.content[0].text, long, '--json is never clipped');
});
