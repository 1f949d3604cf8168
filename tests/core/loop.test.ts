/**
 * The loop and its extension points, in-process: a queued model port, the
 * memory sandbox, a manual clock, and the real store on a temp home. Each
 * test swaps or wraps one hook through WakeOptions.hooks and checks the log
 * the run wrote.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import type { WakeOptions } from '../../src/core/run/wake-api.js';
import { repeatGuard, REPEAT_STOP, REPEAT_WARN } from '../../src/core/run/tool-policy.js';
import { emptyReplyGuard, EMPTY_STOP } from '../../src/core/run/default-hooks.js';
import type { Turn } from '../../src/core/run/loop-hooks.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import type { Reply } from '../helpers/queued-model.js';
import type { TestContext } from 'node:test';
import fs from 'node:fs';
import { RunControl } from '../../src/core/run/run-control.js';
import { RunJournal } from '../../src/core/run/journal.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { unitRun } from '../helpers/unit-run.js';

function setup(t: TestContext, replies: Reply[]) {
  const commands: string[] = [];
  const sandbox = new MemorySandbox({ exec: (cmd) => (commands.push(cmd), cmd === 'true' ? '' : `ran: ${cmd}`) });
  const u = unitRun(t, { agents: { unit: { tools: { bash: { permission: 'always_allow' } } } }, replies, sandbox: () => sandbox });
  const id = u.newSession();
  return { h: u.h, model: u.model!, store: u.store, rt: u.rt, id, events: () => u.events(id), sandbox, commands, run: (o?: WakeOptions) => u.run(id, o) };
}

const results = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'agent.tool_result' ? [{ id: e.tool_use_id, text: e.content.map((c) => ('text' in c ? c.text : '')).join(''), error: e.is_error }] : []));

test('a tool policy that refuses a call: the call gets the policy\'s result, is not run, and the run goes on', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'bash', input: { command: 'echo hi > /workspace/ran' } }] }, { text: 'ok, I will not' }]);
  sendMessage(s.store, s.id, 'run it');
  const r = await s.run({
    hooks: (d) => ({ ...d, tools: { ...d.tools, beforeCall: (use) => ({ kind: 'refuse', result: `policy says no to ${use.name}` }) } }),
  });
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(r.tool_calls, 0);
  assert.deepEqual(s.commands, [], 'the refused command never reached the sandbox');
  assert.deepEqual(results(s.events()).map((x) => [x.text, x.error]), [['policy says no to bash', true]]);
  assert.equal(s.model.requests.length, 2);
  // The refusal is what the model sees next.
  assert.match(JSON.stringify(s.model.requests[1]!.messages.at(-1)), /policy says no to bash/);
});

test('an after-turn hook can ask for another turn (a grader asking for a revision), then let the run end', async (t) => {
  const s = setup(t, [{ text: 'first draft' }, { text: 'second draft' }]);
  sendMessage(s.store, s.id, 'write something');
  let turns = 0;
  const r = await s.run({
    hooks: (d, ctx) => ({
      ...d,
      afterTurn: [
        ...d.afterTurn,
        {
          afterTurn(_c, _j, turn: Turn) {
            turns += 1;
            if (turns > 1) return undefined;
            assert.equal(turn.uses.length, 0);
            sendMessage(ctx.rt.store, ctx.sessionId, 'needs revision: be shorter');
            return { continue: true };
          },
        },
      ],
    }),
  });
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(s.model.requests.length, 2);
  assert.match(JSON.stringify(s.model.requests[1]!.messages), /needs revision: be shorter/);
  const said = s.events().flatMap((e) => (e.type === 'agent.message' ? [e.content[0]!.text] : []));
  assert.deepEqual(said, ['first draft', 'second draft']);
  // The revision request was taken in by this run (a continuation), not left for the next one.
  assert.equal(s.store.snapshot(s.id).pending_events.length, 0);
});

test('an after-run hook sees the ending and may replace it; the replaced ending is what the log says', async (t) => {
  const s = setup(t, [{ text: 'done' }]);
  sendMessage(s.store, s.id, 'go');
  const seen: string[] = [];
  const r = await s.run({
    hooks: (d) => ({
      ...d,
      afterRun: [
        ...d.afterRun,
        {
          afterRun(_c, journal, ending) {
            seen.push(ending.kind === 'idle' ? ending.stop.type : ending.kind);
            journal.error({ code: 'graded_failed', message: 'the outcome was not met', retry: 'exhausted' });
            return { kind: 'idle', stop: { type: 'retries_exhausted' } };
          },
        },
      ],
    }),
  });
  assert.deepEqual(seen, ['end_turn']);
  assert.equal(r.stop_reason?.type, 'retries_exhausted');
  assert.deepEqual(r.errors, ['the outcome was not met']);
  const last = s.events().at(-1)!;
  assert.equal(last.type, 'session.status_idle');
  assert.equal(last.type === 'session.status_idle' && last.stop_reason.type, 'retries_exhausted');
});

test('steering: a hook that stops the run on its own signal ends it as an interrupt would', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'never asked' }]);
  sendMessage(s.store, s.id, 'go');
  let polls = 0;
  const r = await s.run({
    hooks: (d) => ({
      ...d,
      steering: {
        poll(ctx, journal) {
          polls += 1;
          if (polls === 2) ctx.control.abort({ kind: 'interrupt' });
          return d.steering.poll(ctx, journal);
        },
      },
    }),
  });
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(s.model.requests.length, 1);
  assert.equal(polls, 2);
});

test('the journal sums usage over requests and counts the tool calls that ran', async (t) => {
  const s = setup(t, [
    { tools: [{ name: 'bash', input: { command: 'true' } }], usage: { input_tokens: 100, cache_read_input_tokens: 40 } },
    { text: 'done', usage: { input_tokens: 7, output_tokens: 3 } },
  ]);
  sendMessage(s.store, s.id, 'go');
  const r = await s.run();
  assert.equal(r.usage.model_requests, 2);
  assert.equal(r.usage.input_tokens, 107);
  assert.equal(r.usage.output_tokens, 8);
  assert.equal(r.usage.cache_read_input_tokens, 40);
  assert.equal(r.tool_calls, 1);
  assert.deepEqual(s.commands, ['true']);
  assert.equal(s.sandbox.closeCount, 1);
});

test('the repeat guard: a warning from REPEAT_WARN, a halt at REPEAT_STOP; input key order does not matter', () => {
  const guard = repeatGuard();
  const use = (input: unknown) => ({ id: 'e', type: 'agent.tool_use', name: 'bash', input }) as never;
  const decisions = Array.from({ length: REPEAT_STOP }, (_, i) => guard(use(i % 2 ? { a: 1, b: 2 } : { b: 2, a: 1 })));
  decisions.slice(0, REPEAT_WARN - 1).forEach((d) => assert.deepEqual(d, { kind: 'run' }));
  assert.equal(decisions[REPEAT_WARN - 1]!.kind, 'run');
  assert.match((decisions[REPEAT_WARN - 1] as { note: string }).note, new RegExp(`call number ${REPEAT_WARN} of bash`));
  const last = decisions[REPEAT_STOP - 1]!;
  assert.equal(last.kind, 'halt');
  assert.equal(last.kind === 'halt' && last.error.code, 'repeated_tool_call');
  // A different input is a different call.
  assert.deepEqual(guard(use({ a: 2 })), { kind: 'run' });
});

test('the empty-reply guard ends the run at EMPTY_STOP empty replies in a row, and a reply with content resets it', () => {
  const errors: string[] = [];
  const journal = { error: (e: { message: string }) => errors.push(e.message) } as never;
  const g = emptyReplyGuard();
  const empty: Turn = { written: [], uses: [], asks: [], empty: true };
  const full: Turn = { ...empty, empty: false };
  for (let i = 0; i < EMPTY_STOP - 1; i++) assert.equal(g.afterTurn(null as never, journal, empty, null as never), undefined);
  assert.equal(g.afterTurn(null as never, journal, full, null as never), undefined);
  for (let i = 0; i < EMPTY_STOP - 1; i++) assert.equal(g.afterTurn(null as never, journal, empty, null as never), undefined);
  const end = g.afterTurn(null as never, journal, empty, null as never);
  assert.deepEqual(end, { end: { kind: 'idle', stop: { type: 'retries_exhausted' } } });
  assert.equal(errors.length, 1);
});

test('a lost lease silences the run even when it was already stopping for another reason; the first reason still ends it', (t) => {
  const s = setup(t, []);
  const control = new RunControl();
  const journal = new RunJournal({ store: s.store, sessionId: s.id, runId: 'wrun_x', redactor: Redactor.none, control });
  control.abort({ kind: 'shutdown' });
  assert.equal(control.silenced, false);
  control.abort({ kind: 'lease_lost', message: 'taken over' });
  assert.equal(control.silenced, true);
  assert.deepEqual(control.reason(), { kind: 'shutdown' });
  const before = fs.readFileSync(s.store.paths(s.id).events, 'utf8');
  const wq = () => (fs.existsSync(s.store.paths(s.id).wakeQueue) ? fs.readFileSync(s.store.paths(s.id).wakeQueue, 'utf8') : '');
  const wqBefore = wq();
  assert.deepEqual(journal.emit([{ type: 'session.status_rescheduled', reason: 'shutdown', retry_at: new Date(0).toISOString() }]), []);
  journal.scheduleWake({ due_at: new Date(0).toISOString(), reason: 'retry', source: 'retry' });
  assert.equal(fs.readFileSync(s.store.paths(s.id).events, 'utf8'), before, 'nothing appended to the log');
  assert.equal(wq(), wqBefore, 'nothing appended to the wake queue');
});
