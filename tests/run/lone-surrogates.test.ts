/**
 * No request carries a lone UTF-16 surrogate. The Messages API refuses one
 * with a 400 ("no low surrogate in string") that is not retried, and every
 * later request repeats the logged text, so one would end the session's
 * conversation for good. Two ways in: a cut through an emoji (tool output
 * over the limit, a text cut to fit the window, a naming note, the shell's
 * dropped middle), and a hand-written line with a JSON escape like "\ud83d".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, writeAgent, toolResults, textOf, NO_SHELL } from '../helpers/run.js';
import type { Step } from '../helpers/fake-anthropic.js';
import { tempHome } from '../helpers/home.js';
import { ConversationBuilder, buildConversation, type LoggedEvent } from '../../src/core/run/conversation.js';
import { fitMessages, shrinkToBudget } from '../../src/core/run/fit-window.js';
import { PtyShell } from '../../src/core/sandbox/pty-shell.js';
import { systemClock } from '../../src/core/foundation/clock.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EMOJI = '\u{1F600}'; // two UTF-16 code units

/**
 * Every string in `value` (keys too) that holds a lone surrogate. Checked per
 * string, not over JSON.stringify(value): that escapes a lone surrogate as the
 * six ASCII characters \ud83d, which no regex over code units would catch.
 */
function loneSurrogates(value: unknown, at = '$', out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (LONE.test(value)) out.push(at);
  } else if (Array.isArray(value)) value.forEach((v, i) => loneSurrogates(v, `${at}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (LONE.test(k)) out.push(`${at} key ${JSON.stringify(k)}`);
      loneSurrogates(v, `${at}.${k}`, out);
    }
  }
  return out;
}

async function smallLimitBench(t: import('node:test').TestContext, steps: Step[]) {
  const b = await bench(t, { steps });
  b.h.write('environments/small.yaml', 'shell: { output_limit_chars: 2000 }\n');
  writeAgent(b.h, 'test', { environment: 'small' });
  return b;
}

test('bash output of emoji over the output limit is cut between characters: the next request is well-formed', { skip: NO_SHELL }, async (t) => {
  // "x" first and "y" last put both cuts of limitOutput (900 units each) between the halves of a pair.
  const b = await smallLimitBench(t, [{ toolUses: [{ id: 'toolu_emoji', name: 'bash', input: { command: `s=$(printf '${EMOJI}%.0s' {1..3000}); printf 'x%sy' "$s"` } }] }, { text: 'ok' }]);
  const id = b.session('print emoji');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const next = b.fake.requests[1]!;
  const text = toolResults(next).get('toolu_emoji')!.text;
  assert.match(text, /output truncated/);
  assert.ok(text.startsWith(`x${EMOJI}`) && text.endsWith(`${EMOJI}y`), `${text.slice(0, 20)} … ${text.slice(-20)}`);
  assert.deepEqual(loneSurrogates(next.body), []);
  assert.ok(!text.includes('\uFFFD'), 'no half emoji made good by the request either');
  // the logged result is whole too, so later requests rebuilt from the log are
  const result = b.events(id).find((e) => e.type === 'agent.tool_result')!;
  assert.deepEqual(loneSurrogates(result), []);
});

test('a read of an emoji file over the output limit gives a well-formed request', async (t) => {
  const b = await smallLimitBench(t, [{ toolUses: [{ id: 'toolu_read', name: 'read', input: { file_path: 'emoji.txt' } }] }, { text: 'ok' }]);
  const id = b.session('read it');
  fs.writeFileSync(path.join(b.store.paths(id).workspace, 'emoji.txt'), `x${EMOJI.repeat(3000)}y\n`);
  await b.wake(id);
  const text = toolResults(b.fake.requests[1]!).get('toolu_read')!.text;
  assert.match(text, /output truncated/);
  assert.ok(!text.includes('\uFFFD'), 'no half emoji made good by the request');
  assert.deepEqual(loneSurrogates(b.fake.requests[1]!.body), []);
  assert.deepEqual(loneSurrogates(b.events(id).find((e) => e.type === 'agent.tool_result')), []);
});

test('a hand-appended user.message with "\\ud83d" reaches the model as U+FFFD, and the next request extends the first', async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo hi' } }] }, { text: 'ok' }] });
  const id = b.session();
  // The JSON escape, as `echo >>` would write it: a lone high surrogate once parsed.
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"broken \\ud83d emoji"}\n');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const [first, second] = b.fake.requests;
  assert.deepEqual(loneSurrogates(first!.body), []);
  assert.deepEqual(loneSurrogates(second!.body), []);
  assert.equal(textOf(first!.body.messages[0]!.content), 'broken \uFFFD emoji');
  assert.deepEqual(second!.body.messages.slice(0, first!.body.messages.length), first!.body.messages);
  // the log keeps what was written
  const m = b.events(id).find((e) => e.type === 'user.message')!;
  assert.equal(m.type === 'user.message' && (m.content[0] as { text: string }).text, 'broken \ud83d emoji');
});

test('a hand-written custom tool result with a lone low surrogate is well-formed in the request', async (t) => {
  const b = await bench(t, {
    agent: { custom_tools: [{ name: 'lookup', description: 'Look something up', input_schema: { type: 'object' } }] },
    steps: [{ toolUses: [{ id: 'toolu_c', name: 'lookup', input: {} }] }, { text: 'thanks' }],
  });
  const id = b.session('look it up');
  await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.custom_tool_use')!;
  fs.appendFileSync(b.store.paths(id).events, `{"type":"user.custom_tool_result","custom_tool_use_id":${JSON.stringify(use.id)},"content":[{"type":"text","text":"half \\ude00 pair"}]}\n`);
  await b.wake(id);
  const req = b.fake.requests[1]!;
  assert.deepEqual(loneSurrogates(req.body), []);
  assert.equal(toolResults(req).get('toolu_c')!.text, 'half \uFFFD pair');
});

let n = 0;
const ev = (e: Record<string, unknown>): LoggedEvent => ({ line: ++n, event: { id: `sevt_${n}`, created_at: '2026-11-21T10:00:00.000Z', ...e } as unknown as SessionEvent });

test('the builder makes every string it takes in well-formed: messages, thinking, tool uses and results, revisits, ids', () => {
  n = 0;
  const m1 = ev({ type: 'user.message', id: 'sevt_\uD800', content: [{ type: 'text', text: 'hi \uD83D' }] });
  const run = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: ['sevt_\uD800'], wakes: [{ id: 'wake_1', reason: 'later \uDE00', due_at: '2026-11-21T10:05:00.000Z' }] });
  const start = ev({ type: 'span.model_request_start' });
  const said = ev({ type: 'agent.message', content: [{ type: 'text', text: 'echo \uD83D' }] });
  const think = ev({ type: 'agent.thinking', thinking: 'hmm \uDE00', signature: 'sig' });
  const use = ev({ type: 'agent.tool_use', name: 'bash', input: { 'k\uD83D': ['v\uDE00'] }, model_tool_use_id: 'toolu_\uD83D', evaluated_permission: 'allow' });
  const end = ev({ type: 'span.model_request_end', model_request_start_id: start.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const res = ev({ type: 'agent.tool_result', tool_use_id: use.event.id, content: [{ type: 'text', text: 'out \uD83D' }], is_error: false });
  const b = new ConversationBuilder();
  for (const e of [m1, run, start, said, think, use, end, res]) b.feed(e.line, e.event);
  assert.equal(b.knows('sevt_\uDBFF'), false);
  const v = b.view();
  assert.deepEqual(v.repairs, [], 'the tool use and its result still pair');
  assert.deepEqual(loneSurrogates(v.messages), []);
  assert.deepEqual(v.messages, [
    { role: 'user', content: [{ type: 'text', text: 'hi \uFFFD' }, { type: 'text', text: '[scheduled revisit wake_1, due 2026-11-21T10:05:00.000Z] later \uFFFD' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'echo \uFFFD' }, { type: 'thinking', thinking: 'hmm \uFFFD', signature: 'sig' }, { type: 'tool_use', id: 'toolu_\uFFFD', name: 'bash', input: { 'k\uFFFD': ['v\uFFFD'] } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_\uFFFD', content: [{ type: 'text', text: 'out \uFFFD' }] }] },
  ]);
  // the fed events themselves are left as they are
  assert.equal((m1.event as { content: Array<{ text: string }> }).content[0]!.text, 'hi \uD83D');
});

test('an id a caller passes in is matched the way the fed events are', () => {
  n = 0;
  const m = ev({ type: 'user.message', id: 'sevt_\uD800', content: [{ type: 'text', text: 'pending' }] });
  const b = new ConversationBuilder();
  b.feed(m.line, m.event);
  assert.equal(b.knows('sevt_\uD800'), true);
  b.noteUnread('sevt_far_\uDC00', 7, 'too far back');
  assert.equal(b.knows('sevt_far_\uDC00'), true);
  const run = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: ['sevt_\uD800', 'sevt_far_\uDC00'] });
  b.feed(run.line, run.event);
  const v = b.view();
  const texts = (v.messages[0]!.content as Array<{ text: string }>).map((x) => x.text);
  assert.equal(texts.length, 2);
  assert.equal(texts[0], 'pending');
  assert.match(texts[1]!, /^\[openboa: event sevt_far_\uFFFD \(events\.jsonl line 7\) belongs here/);
  assert.deepEqual(loneSurrogates(v.messages), []);
});

test('step 3 cuts a long text of emoji between characters, and its note counts what was left out', () => {
  const text = `x${EMOJI.repeat(3000)}`; // 6001 units; a cut at 2000 would fall inside a pair
  const { messages, shrunk } = shrinkToBudget([{ role: 'user', content: [{ type: 'text', text }] }], 100);
  assert.equal(shrunk, 1);
  const out = (messages[0]!.content[0] as { text: string }).text;
  assert.deepEqual(loneSurrogates(out), []);
  assert.ok(out.startsWith(`x${EMOJI.repeat(999)}\n[openboa: cut here`), out.slice(0, 2010));
  assert.match(out, /4002 of 6001 characters left out/);
});

test('step 2 names an event of emoji by a head that ends on a whole character', () => {
  n = 0;
  // Many blocks, each below the cut floor: only naming can make room.
  const blocks = Array.from({ length: 200 }, () => ({ type: 'text', text: `x${EMOJI.repeat(500)}` }));
  const burst = ev({ type: 'user.message', content: blocks });
  const last = ev({ type: 'user.message', content: [{ type: 'text', text: 'and now?' }] });
  const run = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: [burst.event.id, last.event.id] });
  const fit = fitMessages(buildConversation([burst, last, run]), 2000);
  assert.equal(fit.named, 1);
  const note = (fit.messages[0]!.content[0] as { text: string }).text;
  assert.match(note, /is named here only/);
  assert.deepEqual(loneSurrogates(fit.messages), []);
  // The head is quoted with JSON.stringify, which would turn half a pair into the text "\ud83d".
  assert.ok(note.includes(`"x${EMOJI.repeat(59)}…"`), note);
});

test('the shell drops the middle of an enormous emoji output between characters', { timeout: 120_000 }, async (t) => {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  fs.mkdirSync(ws);
  const sh = await PtyShell.start({ isolation: 'unconfined', network: 'host', mounts: [], env: { PATH: '/usr/bin:/bin', HOME: ws, LC_ALL: 'C.UTF-8' }, cwd: ws, hostCwd: ws, clock: systemClock });
  t.after(() => sh.kill());
  // "x" then 6.5 M emoji: 13 M units, past the 4 M head + 8 M tail kept in memory; the head
  // ends at unit 4,000,000, inside a pair.
  const r = await sh.exec(`printf x; yes '${EMOJI}' | head -n 6500000 | tr -d '\\n'`, { timeoutMs: 100_000 });
  assert.equal(r.exitCode, 0);
  assert.ok(r.droppedChars > 0);
  const m = /\n\[\.\.\. \d+ characters dropped \.\.\.\]\n/.exec(r.output)!;
  const head = r.output.slice(0, m.index);
  const tail = r.output.slice(m.index + m[0].length);
  assert.equal(head.length + r.droppedChars + tail.length, 13_000_001, 'what is kept and what is dropped add up');
  assert.doesNotMatch(r.output, LONE);
});
