/**
 * The memory directory end to end (docs/memory.md): real runs against the
 * scripted Messages API, the real sandbox (bubblewrap), the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { bench, BWRAP, toolResults, type Bench } from '../helpers/run.js';
import { cli } from '../helpers/cli.js';
import { validateLog } from '../helpers/event-schema.js';
import { confirmToolUse, defineOutcome } from '../../src/core/ops/session-ops.js';
import { memoryVersioned, readVersions, substrateVersioned, readContent, sha256Of } from '../../src/core/memory/version-store.js';

const NO_BWRAP = BWRAP ? false : 'needs bubblewrap (/memory is a mount of the sandbox)';

function agent(b: Bench, memory: unknown, extra: Record<string, unknown> = {}) {
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'local', memory, ...extra }));
}

const versions = (b: Bench) => readVersions(memoryVersioned(b.rt.home, 'test')).lines.map((l) => l.line);

test('bash writes to /memory are versioned (after each turn and at the run end) and restorable with openboa memory', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ name: 'bash', input: { command: 'mkdir -p /memory/notes && printf one > /memory/notes/a.md && printf gone > /memory/tmp.md' } }] },
      { toolUses: [{ name: 'bash', input: { command: 'printf two > /memory/notes/a.md && rm /memory/tmp.md' } }] },
      { text: 'noted' },
    ],
  });
  const id = b.session('remember');
  await b.wake(id);
  const v = versions(b);
  assert.deepEqual(
    v.map((l) => [l.op, l.path, l.sha256 && readContent(memoryVersioned(b.rt.home, 'test'), l.sha256)?.toString()]),
    [
      ['write', 'notes/a.md', 'one'],
      ['write', 'tmp.md', 'gone'],
      ['write', 'notes/a.md', 'two'],
      ['delete', 'tmp.md', null],
    ],
  );
  const run = b.events(id).find((e) => e.type === 'session.status_running');
  assert.ok(v.every((l) => l.session_id === id && l.wake_id === run?.wake_id));
  // openboa memory: list, log, show --at, restore.
  const list = await cli(['memory', 'test', '--json'], { home: b.h.root });
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout).documents.map((d: { path: string }) => d.path), ['notes/a.md']);
  const log = await cli(['memory', 'test', 'log', '/memory/notes/a.md'], { home: b.h.root });
  assert.equal(log.code, 0, log.stderr);
  assert.equal(log.stdout.trim().split('\n').length, 3, 'a header and two versions');
  const one = sha256Of(Buffer.from('one'));
  const shown = await cli(['memory', 'test', 'show', 'notes/a.md', '--at', one.slice(0, 10)], { home: b.h.root });
  assert.equal(shown.stdout, 'one\n');
  const r = await cli(['memory', 'test', 'restore', 'notes/a.md', one.slice(0, 8)], { home: b.h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'notes', 'a.md'), 'utf8'), 'one');
  const last = versions(b).at(-1)!;
  assert.deepEqual([last.op, last.path, last.sha256, last.session_id, last.wake_id], ['restore', 'notes/a.md', one, null, null]);
  const bad = await cli(['memory', 'test', 'restore', 'notes/a.md', 'ffffff'], { home: b.h.root });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /no version of notes\/a\.md has sha256 ffffff/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('two sessions writing one memory file at once leave a whole file and two versions', { skip: NO_BWRAP }, async (t) => {
  const A = 'a'.repeat(90_000);
  const B = 'b'.repeat(90_000);
  const b = await bench(t, {
    steps: [
      { toolUses: [{ name: 'write', input: { file_path: '/memory/shared.md', content: A } }, { name: 'bash', input: { command: 'for i in $(seq 20); do c=$(cat /memory/shared.md | tr -d ab | wc -c); [ "$c" = 0 ] || printf BR%sN OKE; done' } }] },
      { toolUses: [{ name: 'write', input: { file_path: '/memory/shared.md', content: B } }, { name: 'bash', input: { command: 'for i in $(seq 20); do c=$(cat /memory/shared.md | tr -d ab | wc -c); [ "$c" = 0 ] || printf BR%sN OKE; done' } }] },
      { text: 'done' },
      { text: 'done' },
    ],
  });
  const s1 = b.session('write A');
  const s2 = b.session('write B');
  await Promise.all([b.wake(s1), b.wake(s2)]);
  const file = fs.readFileSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'shared.md'), 'utf8');
  assert.ok(file === A || file === B, 'one whole file');
  const v = versions(b).filter((l) => l.path === 'shared.md');
  assert.deepEqual(new Set(v.map((l) => l.sha256)), new Set([sha256Of(Buffer.from(A)), sha256Of(Buffer.from(B))]), 'both contents are versions');
  assert.deepEqual(new Set(v.filter((l) => l.op === 'write').map((l) => l.session_id)), new Set([s1, s2]));
  assert.ok(!JSON.stringify(b.fake.requests.map((r) => r.body)).includes('BROKEN'));
});

test('read-only memory refuses writes by the file tools and by bash; none has no /memory', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_w', name: 'write', input: { file_path: '/memory/x.md', content: 'x' } },
        { id: 'toolu_e', name: 'edit', input: { file_path: '/memory/MEMORY.md', old_string: 'seed', new_string: 'changed' } },
        { id: 'toolu_b', name: 'bash', input: { command: 'cat /memory/MEMORY.md; echo y > /memory/y.md; echo rc=$?' } },
      ] },
      { text: 'ok' },
      { toolUses: [{ id: 'toolu_n', name: 'bash', input: { command: 'ls /memory; echo rc=$?' } }] },
      { text: 'ok' },
    ],
  });
  agent(b, 'read_only');
  fs.mkdirSync(memoryVersioned(b.rt.home, 'test').dir, { recursive: true });
  fs.writeFileSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'MEMORY.md'), 'seed');
  const id = b.session('try');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  assert.equal(res.get('toolu_w')!.isError, true);
  assert.match(res.get('toolu_w')!.text, /\/memory is read-only/);
  assert.match(res.get('toolu_e')!.text, /\/memory is read-only/);
  assert.match(res.get('toolu_b')!.text, /^seed/);
  assert.match(res.get('toolu_b')!.text, /Read-only file system[\s\S]*rc=1/);
  assert.equal(fs.readFileSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'MEMORY.md'), 'utf8'), 'seed');
  assert.deepEqual(versions(b), []);
  assert.match(b.fake.requests[0]!.body.system!, /\/memory \(read-only\)/);
  agent(b, 'none');
  const id2 = b.session('look');
  await b.wake(id2);
  assert.match(toolResults(b.fake.requests[3]!).get('toolu_n')!.text, /No such file or directory[\s\S]*rc=2/);
  assert.doesNotMatch(b.fake.requests[2]!.body.system!, /\/memory/);
});

test('MEMORY.md reaches the system prompt, cut at prompt_bytes, the same for every request of a run; a change is in the next run', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ name: 'write', input: { file_path: '/memory/MEMORY.md', content: 'the door is green now' } }] },
      { text: 'ok' },
      { text: 'second run' },
    ],
  });
  agent(b, { prompt_bytes: 200 });
  fs.mkdirSync(memoryVersioned(b.rt.home, 'test').dir, { recursive: true });
  fs.writeFileSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'MEMORY.md'), `the door is blue\n${'z'.repeat(5000)}`);
  const id = b.session('go');
  await b.wake(id);
  const [r1, r2] = b.fake.requests;
  assert.match(r1!.body.system!, /# Memory\n[\s\S]*the door is blue/);
  assert.match(r1!.body.system!, /\[MEMORY\.md is 5017 bytes; only its first 200 are shown here/);
  assert.ok(!r1!.body.system!.includes('z'.repeat(200)));
  assert.equal(r2!.body.system, r1!.body.system, 'the prompt does not change within a run (the prompt cache)');
  const id2 = b.session('again');
  await b.wake(id2);
  assert.match(b.fake.requests[2]!.body.system!, /the door is green now/);
  assert.doesNotMatch(b.fake.requests[2]!.body.system!, /MEMORY\.md is \d+ bytes/);
});

test('a document over 100 kB is refused by write with a clear error; one made by bash is noted, not stored; LEARNINGS.md is not the file tools\' to write', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_w', name: 'write', input: { file_path: '/memory/big.md', content: 'x'.repeat(100_001) } },
        { id: 'toolu_b', name: 'bash', input: { command: 'head -c 200000 /dev/zero > /memory/huge.bin; ln -s /etc /memory/etc; mkfifo /memory/pipe' } },
        { id: 'toolu_l', name: 'write', input: { file_path: '/memory/LEARNINGS.md', content: 'fake learnings' } },
      ] },
      { text: 'ok' },
    ],
  });
  const id = b.session('big');
  await b.wake(id);
  const w = toolResults(b.fake.requests[1]!).get('toolu_w')!;
  assert.equal(w.isError, true);
  assert.match(w.text, /\/memory\/big\.md: 100001 bytes is more than a document here may hold \(100000 bytes\)/);
  const l = toolResults(b.fake.requests[1]!).get('toolu_l')!;
  assert.equal(l.isError, true);
  assert.match(l.text, /\/memory\/LEARNINGS\.md: rendered by the runtime from your learnings journal .*use the learn tool instead|learn tool instead/);
  assert.equal(fs.existsSync(path.join(memoryVersioned(b.rt.home, 'test').dir, 'LEARNINGS.md')), false);
  assert.deepEqual(versions(b).map((l) => [l.op, l.path, l.sha256, l.bytes]), [['too_large', 'huge.bin', null, 200000]]);
});

test('promote is refused while the session has an open outcome', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_p1', name: 'promote', input: { paths: ['plan.md'], message: 'too early' } }] }, { text: 'waiting' }] });
  agent(b, 'read_write', { tools: { promote: { permission: 'always_allow' } } });
  const id = b.session('promote the plan');
  fs.writeFileSync(path.join(b.store.paths(id).workspace, 'plan.md'), 'the plan');
  defineOutcome(b.store, id, { description: 'a plan', check: 'true' });
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!).get('toolu_p1')!;
  assert.equal(res.isError, true);
  assert.match(res.text, /^promote is refused while this session's outcome \S+ is open \(running\): promote only once it is satisfied\. Nothing was promoted\.$/);
  assert.deepEqual(fs.readdirSync(substrateVersioned(b.rt.home, 'test').dir), []);
  assert.equal(fs.existsSync(substrateVersioned(b.rt.home, 'test').log), false);
});

test('promote asks a person; confirmed, it copies beneath /workspace only, all or nothing, versioned; /substrate is read-only', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_p2', name: 'promote', input: { paths: ['plan.md', '/workspace/sub/tool.sh', 'escape.md'], message: 'one bad path' } }] },
      { toolUses: [{ id: 'toolu_p3', name: 'promote', input: { paths: ['plan.md', '/workspace/sub/tool.sh'], message: 'the reviewed plan' } }] },
      { toolUses: [{ id: 'toolu_b', name: 'bash', input: { command: 'cat /substrate/plan.md; echo; echo x > /substrate/plan.md; echo rc=$?' } }] },
      { text: 'promoted' },
    ],
  });
  const id = b.session('promote the plan');
  const ws = b.store.paths(id).workspace;
  fs.writeFileSync(path.join(ws, 'plan.md'), 'the plan');
  fs.mkdirSync(path.join(ws, 'sub'));
  fs.writeFileSync(path.join(ws, 'sub', 'tool.sh'), 'echo hi');
  fs.symlinkSync('/runtime/environment.json', path.join(ws, 'escape.md'));
  const sub = substrateVersioned(b.rt.home, 'test');
  // Each call waits for a person (always_ask by default).
  for (const name of ['toolu_p2', 'toolu_p3']) {
    const r = await b.wake(id);
    const use = b.events(id).find((e) => e.type === 'agent.tool_use' && e.name === 'promote' && JSON.stringify(e.input).includes(name === 'toolu_p2' ? 'one bad path' : 'reviewed'))!;
    assert.deepEqual(r.stop_reason, { type: 'requires_action', event_ids: [use.id] }, name);
    assert.deepEqual(fs.readdirSync(sub.dir), [], 'nothing before the confirmation');
    confirmToolUse(b.store, id, use.id, { allow: true });
  }
  await b.wake(id);
  const results = b.events(id).filter((e) => e.type === 'agent.tool_result').map((e) => e.type === 'agent.tool_result' && { error: e.is_error, text: JSON.stringify(e.content) });
  assert.equal(results[0] && results[0].error, true);
  assert.match(String(results[0] && results[0].text), /Nothing was promoted:.*escape\.md: resolves to \/runtime\/environment\.json, which is not under \/workspace/);
  assert.equal(results[1] && results[1].error, false);
  assert.equal(fs.readFileSync(path.join(sub.dir, 'plan.md'), 'utf8'), 'the plan');
  assert.equal(fs.readFileSync(path.join(sub.dir, 'sub', 'tool.sh'), 'utf8'), 'echo hi');
  const lines = readVersions(sub).lines.map((l) => l.line);
  assert.deepEqual(lines.map((l) => [l.op, l.path, l.message, l.session_id]), [
    ['promote', 'plan.md', 'the reviewed plan', id],
    ['promote', 'sub/tool.sh', 'the reviewed plan', id],
  ]);
  assert.equal(readContent(sub, lines[0]!.sha256!)?.toString(), 'the plan');
  const bash = toolResults(b.fake.requests.at(-1)!).get('toolu_b')!;
  assert.match(bash.text, /^the plan\n[\s\S]*Read-only file system[\s\S]*rc=1/);
});

test('a lesson learned in one session is in the system prompt of the next session of the agent, through openboa wake', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ name: 'learn', input: { kind: 'lesson', text: 'Run the linter before committing; CI rejects unformatted code.', tags: ['ci'] } }] },
      { text: 'learned' },
      { text: 'second session' },
    ],
  });
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url };
  const s1 = b.session('learn something');
  const w1 = await cli(['wake', s1], { home: b.h.root, env });
  assert.equal(w1.code, 0, w1.stderr);
  assert.doesNotMatch(b.fake.requests[0]!.body.system!, /Run the linter/, 'not in the prompt of the run that learned it');
  const s2 = b.session('next task');
  const w2 = await cli(['wake', s2], { home: b.h.root, env });
  assert.equal(w2.code, 0, w2.stderr);
  const system = b.fake.requests[2]!.body.system!;
  assert.match(system, /# Learnings\n[\s\S]*- lesson, noted by the agent \(\d{4}-\d\d-\d\d\): Run the linter before committing; CI rejects unformatted code\. \[ci\] \(lrn_[0-9a-f]{32}\)/);
});
