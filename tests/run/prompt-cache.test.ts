/**
 * A prompt that caches: every request repeats the one before as its prefix
 * (tools, system, earlier messages), with cache breakpoints, and what changes
 * from run to run is a note in the run's own user turn, kept in the log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench } from '../helpers/run.js';
import type { RecordedRequest } from '../helpers/fake-anthropic.js';

type Body = RecordedRequest['raw'];
const NOTE = /^\[openboa\] now \S+; this run (wrun_[0-9a-f]+), woken by (\w+): /;

/** The request's parts without their cache marks, as the cache compares them. */
function unmarked(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x) => (k === 'cache_control' ? undefined : x));
}

function isPrefix(earlier: Body, later: Body): string | null {
  if (JSON.stringify(unmarked(earlier.tools)) !== JSON.stringify(unmarked(later.tools))) return 'tools differ';
  if (JSON.stringify(unmarked(earlier.system)) !== JSON.stringify(unmarked(later.system))) return 'system differs';
  for (let i = 0; i < earlier.messages.length; i++) {
    if (JSON.stringify(unmarked(earlier.messages[i])) !== JSON.stringify(unmarked(later.messages[i]))) return `message ${i} differs`;
  }
  return null;
}

test('each request repeats the previous one as its prefix, within a run and across runs; breakpoints on tools, system and the newest block', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo one' } }] },
      { toolUses: [{ id: 'toolu_2', name: 'schedule_wake', input: { delay_seconds: 60, reason: 'look again' } }] },
      { text: 'first run done' },
      { text: 'second run done' },
      { text: 'third run done' },
    ],
  });
  const id = b.session('start');
  await b.wake(id);
  b.store.appendUserEvent(id, { type: 'user.message', content: 'a second message' });
  await b.wake(id);
  await b.deps.clock.advance(61_000);
  const third = await b.wake(id);
  assert.equal(third.trigger, 'wake_queue');
  const raws = b.fake.requests.map((r) => r.raw);
  assert.equal(raws.length, 5);
  for (let i = 1; i < raws.length; i++) assert.equal(isPrefix(raws[i - 1]!, raws[i]!), null, `request ${i} repeats request ${i - 1}`);
  for (const r of raws) {
    const system = r.system as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(system.at(-1)!.cache_control, { type: 'ephemeral' }, 'the system prompt is a breakpoint');
    assert.deepEqual((r.tools!.at(-1) as unknown as Record<string, unknown>).cache_control, { type: 'ephemeral' }, 'the last tool is a breakpoint');
    const last = r.messages.at(-1)!.content as Array<Record<string, unknown>>;
    assert.deepEqual(last.at(-1)!.cache_control, { type: 'ephemeral' }, 'the newest block is a breakpoint');
    const marks = JSON.stringify(r).split('"cache_control"').length - 1;
    assert.ok(marks <= 4, `at most 4 breakpoints (${marks})`);
    assert.doesNotMatch(JSON.stringify(r.system), /wrun_|now 20/, 'no per-run fact in the system prompt');
  }
  // each run's user turn ends with its note: the run, the trigger, and (third run) why it woke
  const notes = raws[4]!.messages.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : [])).flatMap((c) => (c.type === 'text' && NOTE.test(String(c.text)) ? [String(c.text)] : []));
  assert.equal(notes.length, 3);
  assert.deepEqual(notes.map((n) => NOTE.exec(n)![2]), ['event', 'event', 'wake_queue']);
  assert.match(notes[2]!, /look again/);
  assert.match(notes[0]!, /pending revisits:\n {2}\(none\)/);
  // the note is in the log, so a conversation rebuilt from it (no cache, a new process) is the same
  const running = b.events(id).filter((e) => e.type === 'session.status_running' && !e.continuation);
  assert.deepEqual(running.map((e) => (e.type === 'session.status_running' ? e.context : null)), notes);
  assert.ok(fs.existsSync(b.store.paths(id).events));
});

test('the cache-read share of input is in each span.model_request_end and in openboa status', async (t) => {
  const b = await bench(t, { steps: [{ text: 'one', usage: { input_tokens: 100, cache_creation_input_tokens: 900, cache_read_input_tokens: 0 } }, { text: 'two', usage: { input_tokens: 50, cache_creation_input_tokens: 50, cache_read_input_tokens: 900 } }] });
  const id = b.session('hello');
  await b.wake(id);
  b.store.appendUserEvent(id, { type: 'user.message', content: 'again' });
  await b.wake(id);
  const ends = b.events(id).flatMap((e) => (e.type === 'span.model_request_end' ? [e.cache_read_share] : []));
  assert.deepEqual(ends, [0, 0.9]);
  const { cli } = await import('../helpers/cli.js');
  const st = await cli(['status', id], { home: b.h.root });
  assert.match(st.stdout, /usage {6}150 in, \d+ out, 2 model requests; 45% of input read from the prompt cache \(900 tokens\)/);
  const js = JSON.parse((await cli(['status', id, '--json'], { home: b.h.root })).stdout);
  assert.equal(js.cache_read_share, 0.45);
});
