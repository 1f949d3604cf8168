import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { archiveDefinition, createDefinition, listDefinitions, retrieveDefinition, updateDefinition } from '../../src/core/definitions/definition-store.js';
import { sha256 } from '../../src/core/definitions/definition-files.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { REPO, tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

function history(file: string) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { version: number; op: string; sha256: string });
}

async function rejects(p: Promise<unknown>, code: string, re: RegExp) {
  await assert.rejects(p, (e) => OpenboaError.is(e) && e.code === code && re.test(e.message));
}

test('a hand edit is a version; a change from before it is a conflict', async (t) => {
  const h = tempHome(t);
  const rt = { home: h.home, deps: testDeps() };
  const file = path.join(h.root, 'agents/demo/agent.yaml');
  const first = await retrieveDefinition(rt, 'agent', 'demo');
  assert.equal(first.version, 1);
  assert.equal(first.name, 'demo');
  assert.deepEqual(history(path.join(h.root, 'agents/demo/agent.history.jsonl')).map((l) => l.op), ['import']);
  // Reading again records nothing new.
  assert.equal((await retrieveDefinition(rt, 'agent', 'demo')).version, 1);

  fs.appendFileSync(file, '# a note\n');
  assert.equal((await retrieveDefinition(rt, 'agent', 'demo')).version, 2);
  // A second edit after that read counts again, so a change made from version 2 is stale.
  fs.appendFileSync(file, '# another\n');
  await rejects(updateDefinition(rt, 'agent', 'demo', { expectedVersion: 2, edit: (d) => d.setIn(['system'], 'x') }), 'conflict', /version 3, not 2/);
  assert.match(fs.readFileSync(file, 'utf8'), /# another\n$/, 'the refused change wrote nothing');
  const s = await updateDefinition(rt, 'agent', 'demo', { expectedVersion: 3, edit: (d) => d.setIn(['system'], 'x') });
  assert.equal(s.version, 4);
  assert.deepEqual(history(path.join(h.root, 'agents/demo/agent.history.jsonl')).map((l) => `${l.version}:${l.op}`), ['1:import', '2:edit', '3:edit', '4:update']);
  // A change that changes nothing makes no version.
  assert.equal((await updateDefinition(rt, 'agent', 'demo', { edit: (d) => d.setIn(['system'], 'x') })).version, 4);
});

test('bad input names the file and the field; an invalid YAML written by hand is reported, not counted silently', async (t) => {
  const h = tempHome(t);
  const rt = { home: h.home, deps: testDeps() };
  await rejects(updateDefinition(rt, 'agent', 'demo', { edit: (d) => d.setIn(['limits', 'max_wake_seconds'], 'soon') }), 'invalid_input', /agents\/demo\/agent\.yaml:\d+: limits\.max_wake_seconds: .*number/);
  await rejects(createDefinition(rt, 'environment', { name: 'e', metadata: {}, build: (d) => d.setIn(['network'], 'wide') }), 'invalid_input', /environments\/e\.yaml:1: network: .*"none".*"host"/);
  assert.ok(!fs.existsSync(path.join(h.root, 'environments/e.history.jsonl')));
  fs.writeFileSync(path.join(h.root, 'environments/local.yaml'), 'network: [\n');
  await rejects(retrieveDefinition(rt, 'environment', 'local'), 'invalid_input', /environments\/local\.yaml:\d+:\d+: YAML syntax error/);
  await rejects(retrieveDefinition(rt, 'agent', 'Demo'), 'invalid_input', /not a valid agent id/);
});

test('crash leftovers: a pending change its history names is finished, one it does not name is dropped, a torn line is cut', async (t) => {
  const h = tempHome(t);
  const rt = { home: h.home, deps: testDeps() };
  const dir = path.join(h.root, 'agents/demo');
  const yaml = path.join(dir, 'agent.yaml');
  const hist = path.join(dir, 'agent.history.jsonl');
  const v1 = await retrieveDefinition(rt, 'agent', 'demo');
  const old = fs.readFileSync(yaml, 'utf8');

  // Killed after the history line, before the rename: the change happened.
  const next = `${old}# finished after the crash\n`;
  fs.writeFileSync(`${yaml}.pending`, next);
  fs.appendFileSync(hist, `${JSON.stringify({ version: 2, op: 'update', sha256: sha256(next), at: v1.created_at, name: 'demo', metadata: {}, archived_at: null })}\n`);
  const v2 = await retrieveDefinition(rt, 'agent', 'demo');
  assert.equal(v2.version, 2);
  assert.equal(fs.readFileSync(yaml, 'utf8'), next);
  assert.ok(!fs.existsSync(`${yaml}.pending`));

  // Killed before the history line: the change did not happen, and the next change is not confused by it.
  fs.writeFileSync(`${yaml}.pending`, `${old}# never committed\n`);
  // Killed inside the append: half a line.
  fs.appendFileSync(hist, '{"version":3,"op":"upd');
  assert.equal((await retrieveDefinition(rt, 'agent', 'demo')).version, 2, 'the torn line is not read');
  const v3 = await updateDefinition(rt, 'agent', 'demo', { expectedVersion: 2, metadata: { k: 'v' } });
  assert.equal(v3.version, 3);
  assert.ok(!fs.existsSync(`${yaml}.pending`));
  assert.equal(fs.readFileSync(yaml, 'utf8'), next);
  assert.deepEqual(history(hist).map((l) => l.version), [1, 2, 3], 'the torn line was cut before the append');
});

test('archive keeps the YAML and the version; list leaves archived ones out unless asked', async (t) => {
  const h = tempHome(t);
  const rt = { home: h.home, deps: testDeps() };
  const a = await archiveDefinition(rt, 'agent', 'claude');
  assert.ok(a.archived_at);
  assert.equal(a.version, 1);
  assert.ok(fs.existsSync(path.join(h.root, 'agents/claude/agent.yaml')));
  assert.deepEqual((await listDefinitions(rt, 'agent', { limit: 10 })).data.map((s) => s.id), ['demo']);
  assert.deepEqual((await listDefinitions(rt, 'agent', { limit: 10, includeArchived: true })).data.map((s) => s.id), ['claude', 'demo']);
});

test('two processes updating from the versions they read: every version is won once', async (t) => {
  const h = tempHome(t);
  const rt = { home: h.home, deps: testDeps() };
  assert.equal((await retrieveDefinition(rt, 'agent', 'demo')).version, 1);
  const rounds = 25;
  const run = (tag: string) =>
    new Promise<{ won: number; lost: number }>((resolve, reject) => {
      const p = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'tests/helpers/definition-updater.ts'), h.root, 'demo', String(rounds), tag], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { won: number; lost: number }) : reject(new Error(`updater exited ${code}`))));
    });
  const [a, b] = await Promise.all([run('a'), run('b')]);
  const final = await retrieveDefinition(rt, 'agent', 'demo');
  assert.equal(a.won + b.won, final.version - 1, `${JSON.stringify({ a, b })}: each version was taken by exactly one update`);
  const versions = history(path.join(h.root, 'agents/demo/agent.history.jsonl')).map((l) => l.version);
  assert.deepEqual(versions, versions.map((_, i) => i + 1));
  assert.equal(a.won + a.lost + b.won + b.lost, 2 * rounds);
});
