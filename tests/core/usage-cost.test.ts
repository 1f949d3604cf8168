/**
 * Usage and cost in-process (docs/delegation.md, "Usage and cost"): a queued
 * model port with set usage, the memory sandbox, a manual clock, and the
 * real store, fold and loop on a temp home. Costs are checked against the
 * prices written out here, not against the code that computes them.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { defineOutcome, sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { ModelError, type ModelProvider } from '../../src/core/model/provider.js';
import { defaultPrices, priceOf, readPriceTable } from '../../src/core/definitions/pricing.js';
import { roundUsd, type ModelUsage, type SessionEvent } from '../../src/core/schema/index.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { queuedModel, type Reply } from '../helpers/queued-model.js';
import { validateLog } from '../helpers/event-schema.js';
import { REPO } from '../helpers/home.js';

const USAGE: ModelUsage = { input_tokens: 1000, output_tokens: 200, cache_creation_input_tokens: 300, cache_read_input_tokens: 5000 };
/** USD for `u` at prices per million tokens, written out. */
const dollars = (u: ModelUsage, p: { input: number; output: number; cache_write: number; cache_read: number }) =>
  (u.input_tokens * p.input + u.output_tokens * p.output + u.cache_creation_input_tokens * p.cache_write + u.cache_read_input_tokens * p.cache_read) / 1e6;

function setup(t: TestContext, agent: Record<string, unknown>, replies: Reply[] | ModelProvider) {
  const h = tempHome(t);
  h.write('agents/unit/agent.yaml', YAML.stringify({ provider: 'anthropic', system: 'You are a unit test.', environment: 'local', ...agent }));
  const model = Array.isArray(replies) ? queuedModel(replies) : replies;
  const deps = { ...testDeps({}), models: { anthropic: () => model, scripted: () => model }, sandbox: () => new MemorySandbox({ exec: () => 'ok' }) };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  const id = createSession(store, { agent: 'unit' }).id;
  const events = (): SessionEvent[] =>
    readLines(store.paths(id).events)
      .lines.map((l) => parseEventLine(l, deps.clock.now()))
      .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
  const runtimeJson = (name: string) => JSON.parse(fs.readFileSync(path.join(store.paths(id).runtime, name), 'utf8'));
  return { h, store, rt, id, deps, events, runtimeJson, run: () => wake(rt, id) };
}

/** Every cost the log records (request ends, grader ends, summaries), in order. */
const costs = (evs: SessionEvent[]) =>
  evs.flatMap((e) => (e.type === 'span.model_request_end' || e.type === 'span.outcome_evaluation_end' || e.type === 'agent.thread_context_compacted' ? [{ type: e.type, cost: e.cost_usd }] : []));
const ends = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'span.model_request_end' ? [e] : []));

test('each request end carries its cost at the default price of the model it went to (a dated id priced as its alias)', async (t) => {
  const s = setup(t, { model: 'claude-sonnet-4-5-20250929' }, [{ tools: [{ name: 'bash', input: { command: 'true' } }], usage: USAGE }, { text: 'done', usage: USAGE }]);
  sendMessage(s.store, s.id, 'go');
  await s.run();
  const spans = ends(s.events());
  assert.equal(spans.length, 2);
  // claude-sonnet-4-5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million.
  const each = dollars(USAGE, { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 });
  assert.equal(each, 0.008625);
  for (const e of spans) assert.equal(e.cost_usd, each);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.usage.cost_usd, roundUsd(each * 2));
  assert.equal(snap.tree_usage.cost_usd, snap.usage.cost_usd, 'no children: the tree is the session');
  // Every event the run wrote still validates against the SDK's types (cost_usd is a declared extension).
  const v = validateLog(s.store.paths(s.id).events);
  assert.deepEqual(v.errors, []);
  const file = s.runtimeJson('usage.json');
  assert.equal(file.usage.cost_usd, snap.usage.cost_usd);
  assert.deepEqual(file.prices['claude-sonnet-4-5-20250929'], { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3, source: 'default' });
  assert.equal(file.note, null);
});

test("agent.yaml pricing overrides and adds prices; the grader's requests are costed at the grader model's price", async (t) => {
  const own = { input: 2, output: 8, cache_write: 2.5, cache_read: 0.2 };
  const haiku = { input: 0.5, output: 2.5, cache_write: 0.625, cache_read: 0.05 };
  const grade: Reply = { tools: [{ name: 'grade_outcome', input: { result: 'satisfied', explanation: 'fine' } }], usage: { ...USAGE, input_tokens: 4000 } };
  const s = setup(t, { model: 'unit-model', outcomes: { grader_model: 'claude-haiku-4-5' }, pricing: { 'unit-model': own, 'claude-haiku-4-5': haiku } }, [{ text: 'a haiku', usage: USAGE }, grade]);
  defineOutcome(s.store, s.id, { description: 'write a haiku', rubric: '1. three lines' });
  await s.run();
  const evs = s.events();
  const c = costs(evs);
  assert.deepEqual(c, [
    { type: 'span.model_request_end', cost: dollars(USAGE, own) },
    { type: 'span.outcome_evaluation_end', cost: dollars({ ...USAGE, input_tokens: 4000 }, haiku) },
  ]);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.usage.cost_usd, roundUsd(c[0]!.cost! + c[1]!.cost!));
  assert.equal(snap.usage.model_requests, 2);
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
  const prices = s.runtimeJson('usage.json').prices;
  assert.equal(prices['unit-model'].source, 'agent.yaml');
  assert.equal(prices['claude-haiku-4-5'].source, 'agent.yaml', "the agent's price wins over the default");
});

test('a model priced nowhere costs 0, and runtime/usage.json says so once, not each request', async (t) => {
  const s = setup(t, { model: 'mystery-model' }, [{ tools: [{ name: 'bash', input: { command: 'true' } }], usage: USAGE }, { text: 'done', usage: USAGE }]);
  sendMessage(s.store, s.id, 'go');
  await s.run();
  assert.deepEqual(ends(s.events()).map((e) => e.cost_usd), [0, 0]);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.usage.cost_usd, 0);
  assert.equal(snap.usage.input_tokens, 2000, 'the tokens are counted all the same');
  const file = s.runtimeJson('usage.json');
  assert.equal(file.prices['mystery-model'].source, 'unknown');
  assert.match(file.note, /no price for mystery-model .* recorded at cost 0/);
  assert.doesNotMatch(fs.readFileSync(s.store.paths(s.id).events, 'utf8'), /no price/, 'the log carries no per-request note');
});

test('after failed attempts the fallback model answers, and its requests are costed at its own price', async (t) => {
  const overloaded = new ModelError({ message: 'overloaded', errorType: 'model_overloaded_error', code: 'http_529', retryable: true });
  const s = setup(t, { model: 'claude-opus-4-5', fallback_model: 'claude-haiku-4-5', fallback_after: 1 }, [{ error: overloaded }, { text: 'done', usage: USAGE }]);
  sendMessage(s.store, s.id, 'go');
  await s.run();
  assert.equal(s.store.snapshot(s.id).status, 'rescheduling');
  await s.deps.clock.advance(3_600_000);
  await s.run();
  const evs = s.events();
  const starts = evs.flatMap((e) => (e.type === 'span.model_request_start' ? [e.model] : []));
  assert.deepEqual(starts, ['claude-opus-4-5', 'claude-haiku-4-5']);
  // The failed request cost nothing; the fallback's is at Haiku 4.5's price ($1, $5, $1.25, $0.10), not Opus's.
  assert.deepEqual(ends(evs).map((e) => [e.is_error, e.cost_usd]), [[true, 0], [false, dollars(USAGE, { input: 1, output: 5, cache_write: 1.25, cache_read: 0.1 })]]);
  const prices = s.runtimeJson('usage.json').prices;
  assert.deepEqual(Object.keys(prices), ['claude-opus-4-5', 'claude-haiku-4-5']);
});

test("a compaction's summary is costed, counted in the session's usage, and usage.cost_usd is the sum of every recorded cost, from scratch too", async (t) => {
  const price = { input: 1, output: 2, cache_write: 0, cache_read: 0 };
  const model: ModelProvider = {
    name: 'split',
    async complete(req) {
      const usage = req.tools.length === 0 ? { ...USAGE, input_tokens: 7000 } : { ...USAGE, input_tokens: 123 };
      const text = req.tools.length === 0 ? '## Task Overview\nx\n## Current State\ny\n## Key Discoveries\nz\n## Next Steps\nw\n## Context to Preserve\nv' : 'answer';
      return { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage };
    },
  };
  const s = setup(t, { model: 'unit-model', pricing: { 'unit-model': price }, limits: { context_window_tokens: 20_000, max_output_tokens: 500 } }, model);
  for (let k = 0; k < 10; k++) {
    sendMessage(s.store, s.id, `question ${k}: ${'lorem ipsum dolor sit amet '.repeat(220)}`);
    await s.run();
  }
  const evs = s.events();
  const compaction = evs.find((e) => e.type === 'agent.thread_context_compacted' && e.usage);
  assert.ok(compaction?.type === 'agent.thread_context_compacted' && compaction.usage);
  assert.equal(compaction.cost_usd, dollars(compaction.usage, price));
  const c = costs(evs);
  assert.ok(c.every((x) => typeof x.cost === 'number'), 'every request end, grader end and summary records its cost');
  const sum = c.reduce((a, x) => roundUsd(a + x.cost!), 0);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.usage.cost_usd, sum);
  // The summary's tokens and requests count as the session's, like a grader's.
  const requestEnds = ends(evs);
  assert.equal(snap.usage.model_requests, requestEnds.length + (compaction.model_requests ?? 0));
  assert.equal(snap.usage.input_tokens, requestEnds.reduce((a, e) => a + e.model_usage.input_tokens, 0) + compaction.usage.input_tokens);
  // session.json is a cache: a fold from the log alone gives the same usage.
  fs.rmSync(s.store.paths(s.id).snapshot);
  assert.deepEqual(s.store.snapshot(s.id).usage, snap.usage);
});

test('the default price table ships with the package, reads cleanly, and prices every model the SDK names', () => {
  const d = defaultPrices();
  assert.equal(d.problem, null);
  assert.equal(d.file, path.join(REPO, 'data', 'pricing.json'));
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  assert.ok(pkg.files.includes('data'), 'data/ is in the published files');
  const sdk = JSON.parse(fs.readFileSync(path.join(REPO, 'tests', 'fixtures', 'managed-agents-events.schema.json'), 'utf8'));
  const named: string[] = sdk.definitions.BetaManagedAgentsModel.anyOf.flatMap((x: { enum?: string[] }) => x.enum ?? []);
  assert.ok(named.length > 5);
  assert.deepEqual(named.filter((m) => priceOf({}, m).source !== 'default'), []);
  assert.equal(priceOf({}, 'claude-haiku-4-5-20251001').price, priceOf({}, 'claude-haiku-4-5').price);
  assert.equal(priceOf({}, 'gpt-4o-2024-08-06').price, priceOf({}, 'gpt-4o').price, "OpenAI's dated ids too");
  assert.equal(priceOf({}, 'gpt-4o-2024-08-06').source, 'default');
  assert.equal(priceOf({}, 'qwen2.5-coder:32b').source, 'unknown', 'a local model is unpriced (cost 0)');
});

test('a broken price table is a problem named by file and field, not a crash; a bad agent.yaml price is a definition error naming the field', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('data/pricing.json', JSON.stringify({ models: { m: { input: 1, output: 'two', cache_write: 0, cache_read: 0 } } }));
  const r = readPriceTable(path.join(h.root, 'data', 'pricing.json'));
  assert.deepEqual(r.table.models, {});
  assert.match(r.problem ?? '', /^data\/pricing\.json: models\.m\.output: /);
  assert.doesNotMatch(r.problem ?? '', new RegExp(h.root), 'no host path');
  h.write('agents/a/agent.yaml', 'system: hi\npricing:\n  unit-model:\n    input: 1\n    output: -3\n    cache_write: 0\n    cache_read: 0\n');
  assert.throws(() => loadAgent(h.home, 'a'), (e: unknown) => OpenboaError.is(e) && e.code === 'invalid_input' && /agents\/a\/agent\.yaml:5: pricing\.unit-model\.output: /.test(e.message));
  h.write('agents/a/agent.yaml', 'system: hi\npricing:\n  unit-model:\n    input: 1\n');
  assert.throws(() => loadAgent(h.home, 'a'), (e: unknown) => OpenboaError.is(e) && /pricing\.unit-model\.output: /.test(e.message));
});
