import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BWRAP, bench, textOf, NO_SHELL } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';

test('happy path: a message in, a streamed reply out, everything in the log and runtime/', async (t) => {
  const b = await bench(t, { steps: [{ text: 'Hello from the model.', usage: { input_tokens: 120, output_tokens: 7 } }] });
  const id = b.session('hi there');
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  assert.equal(r.status, 'idle');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(r.usage.input_tokens, 120);
  assert.equal(r.usage.output_tokens, 7);
  assert.equal(r.usage.model_requests, 1);
  const ev = b.events(id);
  assert.deepEqual(
    ev.map((e) => e.type),
    ['session.created', 'user.message', 'session.status_running', 'span.model_request_start', 'agent.message', 'span.model_request_end', 'session.status_idle'],
  );
  const running = ev[2]!;
  assert.equal(running.type === 'session.status_running' && running.processed_event_ids[0], ev[1]!.id);
  for (const e of ev.slice(2)) assert.equal(e.wake_id, r.wake_id, `${e.type} carries the run's wake_id`);
  assert.equal(textOf(ev[4]!.type === 'agent.message' && ev[4]!.content), 'Hello from the model.');
  // what was sent
  assert.equal(b.fake.requests.length, 1);
  const req = b.fake.requests[0]!;
  assert.equal(req.body.stream, true);
  assert.equal(req.body.model, 'fake-model');
  assert.equal(req.body.max_tokens, 8192);
  assert.deepEqual(req.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi there' }] }]);
  assert.match(String(req.headers.authorization ?? req.headers['x-api-key']), /test-key/);
  assert.match(req.body.system ?? '', /^You are a test agent\./);
  assert.match(req.body.system ?? '', new RegExp(`session ${id}`));
  assert.ok(req.body.tools?.some((x) => x.name === 'bash' && x.input_schema.type === 'object'));
  // the snapshot
  const snap = b.store.snapshot(id);
  assert.equal(snap.usage.input_tokens, 120);
  assert.equal(snap.pending_events.length, 0);
  // runtime/
  const rtDir = b.store.paths(id).runtime;
  for (const f of ['environment.json', 'tools.json', 'permissions.json', 'resources.json', 'vaults.json', 'context.json', 'outcome.json', 'event-feed.md', 'relations.json', 'summary.md', `traces/${r.wake_id}.json`]) {
    assert.ok(fs.existsSync(`${rtDir}/${f}`), `runtime/${f}`);
  }
  const ctx = JSON.parse(fs.readFileSync(`${rtDir}/context.json`, 'utf8'));
  assert.equal(ctx.messages, 1);
  assert.ok(ctx.estimated_tokens.total > 0);
  const trace = JSON.parse(fs.readFileSync(`${rtDir}/traces/${r.wake_id}.json`, 'utf8'));
  assert.deepEqual(trace.events.map((e: { type: string }) => e.type), ev.slice(2).map((e) => e.type));
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('nothing pending: skipped, and the log is not touched', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const before = fs.readFileSync(b.store.paths(id).events);
  const r = await b.wake(id);
  assert.equal(r.outcome, 'skipped');
  assert.equal(r.skip_reason, 'nothing_pending');
  assert.equal(r.wake_id, null);
  assert.deepEqual(fs.readFileSync(b.store.paths(id).events), before);
  assert.equal(b.fake.requests.length, 0);
});

test('the system prompt has the agent system, AGENTS.md, the skill index and runtime facts; the skill tool returns a body', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [{ toolUses: [{ id: 'toolu_s1', name: 'skill', input: { name: 'deploy' } }] }, { text: 'ok' }],
  });
  b.h.write('agents/test/AGENTS.md', 'Always answer in haiku.');
  b.h.write('agents/test/skills/deploy/SKILL.md', '---\nname: deploy\ndescription: How to ship the site\n---\nRun make deploy, then check the logs.\n');
  b.h.write('agents/test/skills/broken/SKILL.md', 'no frontmatter here');
  const id = b.session('ship it');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const sys = b.fake.requests[0]!.body.system ?? '';
  assert.match(sys, /You are a test agent\./);
  assert.match(sys, /# Instructions \(AGENTS\.md\)\n\nAlways answer in haiku\./);
  assert.match(sys, /- deploy: How to ship the site/);
  assert.doesNotMatch(sys, /Run make deploy/, 'skill bodies are loaded on demand only');
  assert.match(sys, BWRAP ? /sandbox: bubblewrap/ : /sandbox: network closed \(unshare\), but files are NOT confined/);
  const second = b.fake.requests[1]!.body.messages;
  const result = (second[2]!.content as Array<Record<string, unknown>>)[0]!;
  assert.equal(result.tool_use_id, 'toolu_s1');
  assert.match(textOf(result.content), /Run make deploy, then check the logs\./);
  const env = JSON.parse(fs.readFileSync(`${b.store.paths(id).runtime}/environment.json`, 'utf8'));
  assert.match(env.skill_problems[0], /broken\/SKILL\.md: expected YAML frontmatter/);
});

test('bad lines are reported once as session.error, and the run goes on', async (t) => {
  const b = await bench(t, { steps: [{ text: 'fine' }] });
  const id = b.session('first');
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":7}\nnot json\n');
  fs.appendFileSync(b.store.paths(id).wakeQueue, '{"reason":"no time given"}\n');
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  const errs = b.events(id).filter((e) => e.type === 'session.error');
  assert.deepEqual(errs.map((e) => e.type === 'session.error' && [e.line, e.file ?? 'events.jsonl', e.error.code]), [
    [3, 'events.jsonl', 'invalid_event'],
    [4, 'events.jsonl', 'invalid_event'],
    [1, 'wake-queue.jsonl', 'invalid_wake'],
  ]);
  assert.match(errs[0]!.type === 'session.error' ? errs[0]!.error.message : '', /line 3: user\.message: content/);
  const again = await b.wake(id);
  assert.equal(again.outcome, 'skipped');
  assert.equal(b.events(id).filter((e) => e.type === 'session.error').length, 3, 'reported once');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
