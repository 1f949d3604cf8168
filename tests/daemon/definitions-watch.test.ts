/** Definitions that do not load: `openboa wake` says so with exit 2, and the daemon picks up a fix at once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { cli } from '../helpers/cli.js';
import { beforeHomeRemoved, tempHome } from '../helpers/home.js';
import { startSwapper } from '../helpers/swapper.js';
import { definitionPath } from '../../src/daemon/definition-watcher.js';

test('a fixed agent.yaml is picked up at once, not after the backoff', async (t) => {
  const b = await bench(t, { steps: [{ text: 'fixed now' }] });
  const id = b.session('hello');
  b.h.write('agents/test/agent.yaml', 'provider: anthropic\nmodel: fake-model\nlimits:\n  max_wake_seconds: soon\n');
  const td = await startDaemon(t, b);
  const first = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(first.status, 'rescheduling');
  assert.equal(first.failure?.code, 'invalid_definition');
  await new Promise<void>((resolve) => {
    const check = () => (td.lines.some((l) => JSON.parse(l).event === 'definitions_watcher_ready') ? resolve() : setTimeout(check, 20));
    check();
  });
  // The backoff is 2 s on the manual clock, which does not move: only the fix can start the next run.
  b.h.write('agents/test/agent.yaml', 'provider: anthropic\nmodel: fake-model\nenvironment: local\n');
  const second = await td.result((x) => x.session_id === id && x.outcome === 'executed' && x.wake_id !== first.wake_id);
  assert.equal(second.processed_event_ids.length, 1, 'the message waited for a definition that loads');
  assert.deepEqual(second.stop_reason, { type: 'end_turn' });
  assert.equal(second.failure, null);
});

test('openboa wake: 2 when the definition does not load (naming the file), 1 when the run fails, 0 when it runs', async (t) => {
  const { root, write } = tempHome(t);
  const id = (await cli(['session', 'create', '--agent', 'claude'], { home: root })).stdout.trim();
  await cli(['send', id, 'hello'], { home: root });
  const failed = await cli(['wake', id], { home: root, env: { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' } });
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /^openboa: no API key: set ANTHROPIC_API_KEY/m);
  write('agents/claude/agent.yaml', 'provider: anthropic\nlimits:\n  max_wake_seconds: soon\n');
  await cli(['send', id, 'again'], { home: root });
  const broken = await cli(['wake', id], { home: root, env: { ANTHROPIC_API_KEY: 'k' } });
  assert.equal(broken.code, 2, broken.stderr);
  assert.match(broken.stderr, /agents\/claude\/agent\.yaml:3: limits\.max_wake_seconds/);
  const json = await cli(['wake', id, '--json'], { home: root, env: { ANTHROPIC_API_KEY: 'k' } });
  assert.equal(json.code, 2);
  assert.equal(JSON.parse(json.stdout).failure.code, 'invalid_definition');
});

test("a shell swapping a directory and a symlink in the agent's memory/ in a loop holds up no run (nothing there is watched)", async (t) => {
  const b = await bench(t, { steps: [{ text: 'still here' }] });
  // What the agent's shell would do in /memory: a directory and a symlink, swapped as fast as it goes.
  const memory = path.join(b.h.root, 'agents', 'test', 'memory');
  fs.mkdirSync(path.join(memory, 'rd'), { recursive: true });
  fs.writeFileSync(path.join(memory, 'rd', 'note.md'), 'a note');
  fs.symlinkSync('/etc', path.join(memory, 'rd_alt'));
  const td = await startDaemon(t, b);
  await new Promise<void>((resolve) => {
    const check = () => (td.lines.some((l) => JSON.parse(l).event === 'definitions_watcher_ready') ? resolve() : setTimeout(check, 20));
    check();
  });
  const swapper = await startSwapper(memory, 'rd', 'rd_alt', { seconds: 8, done: path.join(b.h.root, 'swapper-done') });
  beforeHomeRemoved(t, () => swapper.stop());
  // A session of its own: its run needs the daemon's thread (the session watcher, the model's reply, the log).
  const id = b.session('hello');
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed', 30_000);
  assert.equal(r.failure, null);
  assert.equal(fs.existsSync(swapper.done), false, `the run ended only after the swapping (${swapper.mode}) had stopped: the daemon's thread was held`);
});

test('the definition watcher looks only where definitions live', () => {
  const o = { agentsDir: '/h/agents', environmentsDir: '/h/environments' };
  const dir = { isDirectory: () => true } as fs.Stats;
  const file = { isDirectory: () => false } as fs.Stats;
  const watched = (p: string, st?: fs.Stats) => definitionPath(p, st, o);
  for (const [p, st] of [['/h', dir], ['/h/agents', dir], ['/h/agents/a', dir], ['/h/agents/a/agent.yaml', file], ['/h/agents/a/AGENTS.md', file], ['/h/agents/a/skills', dir], ['/h/agents/a/skills/s', dir], ['/h/agents/a/skills/s/SKILL.md', file], ['/h/environments', dir], ['/h/environments/local.yaml', file]] as const) {
    assert.equal(watched(p, st), true, p);
  }
  for (const [p, st] of [['/h/sessions', dir], ['/h/agents/a/memory', dir], ['/h/agents/a/memory/rd', dir], ['/h/agents/a/memory/x.md', file], ['/h/agents/a/memory.versions', dir], ['/h/agents/a/substrate', dir], ['/h/agents/a/skills/s/more', dir], ['/h/agents/a/skills/s/more/x', file], ['/h/environments/sub', dir], ['/h/environments/sub/x.yaml', file]] as const) {
    assert.equal(watched(p, st), false, p);
  }
});
