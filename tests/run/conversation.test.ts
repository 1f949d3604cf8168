import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConversation, type LoggedEvent } from '../../src/core/run/conversation.js';
import { awaitsModel } from '../../src/core/run/message-repair.js';
import { fitToBudget } from '../../src/core/run/token-budget.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { choosePosture } from '../../src/core/sandbox/isolation.js';
import { EnvironmentDefinition } from '../../src/core/schema/index.js';

let n = 0;
const ev = (e: Record<string, unknown>): LoggedEvent => ({ line: ++n, event: { id: `sevt_${n}`, created_at: '2026-11-21T10:00:00.000Z', ...e } as SessionEvent });
const msg = (text: string) => ev({ type: 'user.message', content: [{ type: 'text', text }] });

test('a message appended during a tool call enters where a run took it in, after the tool result', () => {
  n = 0;
  const m1 = msg('first');
  const run1 = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: [m1.event.id] });
  const start = ev({ type: 'span.model_request_start' });
  const think = ev({ type: 'agent.thinking', thinking: 'hmm', signature: 'sig' });
  const use = ev({ type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'allow' });
  const end = ev({ type: 'span.model_request_end', model_request_start_id: start.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const m2 = msg('steer'); // appended while the tool ran
  const res = ev({ type: 'agent.tool_result', tool_use_id: use.event.id, content: [{ type: 'text', text: 'a b' }], is_error: false });
  const cont = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: [m2.event.id], continuation: true });
  const { messages, repairs } = buildConversation([m1, run1, start, think, use, end, m2, res, cont]);
  assert.deepEqual(repairs, []);
  assert.deepEqual(messages, [
    { role: 'user', content: [{ type: 'text', text: 'first' }] },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a b' }] }, { type: 'text', text: 'steer' }] },
  ]);
  assert.equal(awaitsModel(messages), true);
});

test('a pending (not yet taken in) message is not in the conversation; a consumed wake is', () => {
  n = 0;
  const m1 = msg('taken');
  const run = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'wake_queue', processed_event_ids: [m1.event.id], wakes: [{ id: 'wake_1', reason: 'check the build', due_at: '2026-11-21T10:05:00.000Z' }] });
  const m2 = msg('still pending');
  const { messages } = buildConversation([m1, run, m2]);
  assert.deepEqual(messages, [{ role: 'user', content: [{ type: 'text', text: 'taken' }, { type: 'text', text: '[scheduled revisit wake_1, due 2026-11-21T10:05:00.000Z] check the build' }] }]);
});

test('a window that starts mid-turn is repaired: leading assistant and orphan results dropped, missing results added', () => {
  n = 0;
  const orphanStart = ev({ type: 'span.model_request_start' });
  const a = ev({ type: 'agent.message', content: [{ type: 'text', text: 'cut' }] });
  const e1 = ev({ type: 'span.model_request_end', model_request_start_id: orphanStart.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const m = msg('hello');
  const run = ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: [m.event.id] });
  const s2 = ev({ type: 'span.model_request_start' });
  const use = ev({ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_x', evaluated_permission: 'allow' });
  const e2 = ev({ type: 'span.model_request_end', model_request_start_id: s2.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const { messages, repairs } = buildConversation([orphanStart, a, e1, m, run, s2, use, e2]);
  assert.equal(messages[0]!.role, 'user');
  assert.equal(messages.length, 3);
  assert.deepEqual(messages[2], { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: [{ type: 'text', text: 'no result was recorded for this tool call' }], is_error: true }] });
  assert.equal(repairs.length, 2);
});

test('fitToBudget drops whole old turns, never a tool round trip', () => {
  const big = 'x'.repeat(4000);
  const messages = [
    { role: 'user' as const, content: [{ type: 'text' as const, text: big }] },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'bash', input: {} }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: [{ type: 'text' as const, text: big }] }] },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok' }] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'latest' }] },
  ];
  const fit = fitToBudget(messages, 500);
  assert.equal(fit.dropped, 4);
  assert.deepEqual(fit.messages, [messages[4]]);
  assert.equal(fitToBudget(messages, 10_000).dropped, 0);
});

test('sandbox posture: bwrap where it works; auto falls back to unshare for the network only; process is explicit', () => {
  const env = (o: Record<string, unknown>) => EnvironmentDefinition.parse(o);
  const all = { bwrap: true, unshare: true, pdeathsig: true, notes: [] };
  const noBwrap = { bwrap: false, unshare: true, pdeathsig: true, notes: ['bwrap: no user namespaces'] };
  const nothing = { bwrap: false, unshare: false, pdeathsig: false, notes: ['bwrap: missing', 'unshare: denied'] };
  assert.equal((choosePosture(env({}), all) as { isolation: string }).isolation, 'bwrap');
  const fallback = choosePosture(env({ sandbox: 'auto', network: 'none' }), noBwrap) as { isolation: string; network_closed: boolean; filesystem_confined: boolean; reason: string };
  assert.deepEqual([fallback.isolation, fallback.network_closed, fallback.filesystem_confined], ['unshare-net', true, false]);
  assert.match(fallback.reason, /files NOT confined/);
  assert.equal((choosePosture(env({ sandbox: 'auto', network: 'host' }), noBwrap) as { isolation: string }).isolation, 'unconfined');
  assert.match((choosePosture(env({ sandbox: 'bwrap' }), noBwrap) as { error: string }).error, /requires sandbox: bwrap/);
  assert.match((choosePosture(env({ network: 'none' }), nothing) as { error: string }).error, /neither works/);
  assert.equal((choosePosture(env({ sandbox: 'process' }), all) as { isolation: string }).isolation, 'unconfined');
});

test('viewing after every event gives the same conversation as a fresh rebuild (incremental repair)', async () => {
  const { ConversationBuilder } = await import('../../src/core/run/conversation.js');
  const { estimateTokens } = await import('../../src/core/run/token-budget.js');
  // a pseudo-random but fixed mix of turns, dangling uses, steering and cut windows
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  n = 0;
  const events: LoggedEvent[] = [];
  for (let k = 0; k < 60; k++) {
    const m = msg(`m${k}`);
    events.push(m, ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: rnd() < 0.9 ? [m.event.id] : [] }));
    const turns = 1 + Math.floor(rnd() * 3);
    for (let t = 0; t < turns; t++) {
      const s = ev({ type: 'span.model_request_start' });
      events.push(s);
      if (rnd() < 0.7) events.push(ev({ type: 'agent.message', content: [{ type: 'text', text: `a${k}.${t}` }] }));
      const uses = rnd() < 0.6 ? [ev({ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: `toolu_${k}_${t}`, evaluated_permission: 'allow' })] : [];
      events.push(...uses, ev({ type: 'span.model_request_end', model_request_start_id: s.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }));
      for (const u of uses) if (rnd() < 0.85) events.push(ev({ type: 'agent.tool_result', tool_use_id: u.event.id, content: [{ type: 'text', text: 'ok' }], is_error: false }));
      if (rnd() < 0.1) {
        const steer = msg(`steer${k}`);
        events.push(steer, ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: [steer.event.id], continuation: true }));
      }
    }
  }
  for (const from of [0, 5, 17]) {
    const b = new ConversationBuilder();
    const slice = events.slice(from);
    slice.forEach((e, i) => {
      b.feed(e.line, e.event);
      if (i % 3 === 0 || i === slice.length - 1) {
        const v = b.view();
        assert.deepEqual(v.messages, buildConversation(slice.slice(0, i + 1)).messages, `from ${from}, after event ${i}`);
        assert.equal(v.tokens, v.messages.reduce((a, m) => a + estimateTokens(m), 0), 'the running token count');
      }
    });
  }
});

test('a conversation that outgrows the window keeps fitting: compacted, the newest turn whole, every request under the window', async (t) => {
  const { bench } = await import('../helpers/run.js');
  const { validateLog } = await import('../helpers/event-schema.js');
  const long = (k: number) => `question ${k}: ${'please consider this carefully. '.repeat(120)}`;
  // The fake answers in order: summary requests take their turn too, so each run may say any of these.
  const b = await bench(t, {
    agent: { limits: { context_window_tokens: 6000, max_output_tokens: 500 } },
    steps: Array.from({ length: 20 }, (_, i) => ({ text: `answer ${i}` })),
  });
  const id = b.session(long(0));
  await b.wake(id);
  for (let k = 1; k < 6; k++) {
    b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: long(k) }] });
    await b.wake(id);
  }
  const agentRequests = b.fake.requests.filter((r) => (r.body.tools ?? []).length > 0);
  assert.equal(agentRequests.length, 6);
  for (const r of agentRequests) assert.ok(JSON.stringify(r.body.messages).length / 4 < 6000, 'every request fits the window');
  const last = agentRequests[5]!.body.messages;
  assert.match(JSON.stringify(last[last.length - 1]), /question 5/, 'the newest turn is there');
  assert.doesNotMatch(JSON.stringify(last), /question 0:/, 'the oldest is not there whole');
  const compacted = b.events(id).filter((e) => e.type === 'agent.thread_context_compacted');
  assert.ok(compacted.length >= 1);
  const c = compacted[compacted.length - 1]!;
  assert.ok(c.type === 'agent.thread_context_compacted' && c.tokens_after < c.tokens_before && c.summary_path === '/runtime/summary.md');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
