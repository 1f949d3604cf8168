/**
 * A secret the agent copies into /memory (docs/memory.md, "Secrets in
 * memory"): real runs against the scripted Messages API, the real sandbox
 * (bubblewrap), the built CLI. Memory outlives the session that wrote it, so
 * what it keeps and what is read back from it — the versions, `openboa
 * memory show`, the next run's system prompt, another session's shell in
 * an environment without that secret — holds neither the secret nor any 16
 * characters of it. The file in /memory keeps what the agent wrote.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { bench, BWRAP, toolResults } from '../helpers/run.js';
import { cli } from '../helpers/cli.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { memoryVersioned } from '../../src/core/memory/version-store.js';

const NO_BWRAP = BWRAP ? false : 'needs bubblewrap (/memory is a mount of the sandbox)';

const SECRET = 'mt_8Hq3Zx6Lp1Wr9Kd4Nb7Vs2Jc5Ty0Fg3Ae8Ub';

/** The runs of 16 characters of SECRET that `text` holds (the first few). */
const pieces = (text: string) => Array.from({ length: SECRET.length - 15 }, (_, i) => SECRET.slice(i, i + 16)).filter((p) => text.includes(p)).slice(0, 3);

/** Every file under `root` but those under `except`, with the pieces of SECRET it holds. */
function leaks(root: string, except: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (except.some((x) => p === x || p.startsWith(`${x}/`))) continue;
      if (pieces(e.name).length) out.push(`${path.relative(root, p)} (its name)`);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && pieces(fs.readFileSync(p, 'latin1')).length) out.push(path.relative(root, p));
    }
  };
  walk(root);
  return out;
}

test('a secret copied into /memory by bash and by write, named in a file and a learning: no version, CLI output, prompt or other session sees it', { skip: NO_BWRAP }, async (t) => {
  const b = await bench(t, {
    steps: [
      {
        toolUses: [
          { name: 'bash', input: { command: 'echo "$MY_TOKEN" > /memory/tok.md && echo "the key starts ${MY_TOKEN:0:30}" >> /memory/MEMORY.md && echo hi > "/memory/$MY_TOKEN.md"' } },
          { name: 'write', input: { file_path: '/memory/w.md', content: `written: ${SECRET}\n` } },
          { name: 'learn', input: { kind: 'lesson', text: 'keep the key', tags: [SECRET.slice(0, 30)] } },
        ],
      },
      { text: 'remembered' },
      { toolUses: [{ id: 'toolu_cat', name: 'bash', input: { command: 'cat /memory/tok.md /memory/w.md; ls /memory' } }] },
      { text: 'read' },
    ],
    env: { OPENBOA_TEST_MEMORY_SECRET: SECRET },
  });
  b.h.write('environments/secret.yaml', 'env:\n  MY_TOKEN: { secret: { env: OPENBOA_TEST_MEMORY_SECRET } }\n');
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'secret', memory: 'read_write' }));
  const s1 = b.session('remember the token');
  await b.wake(s1);
  const mem = memoryVersioned(b.rt.home, 'test');
  assert.equal(fs.readFileSync(path.join(mem.dir, 'tok.md'), 'utf8'), `${SECRET}\n`, 'the agent\'s own file keeps what it wrote');

  // Another session of the agent, in an environment that does not have the secret.
  const s2 = createSession(b.store, { agent: 'test', env: 'local' }).id;
  sendMessage(b.store, s2, 'what do you remember?');
  await b.wake(s2);
  const cat = toolResults(b.fake.requests[3]!).get('toolu_cat')!;
  assert.match(cat.text, /\[REDACTED:MY_TOKEN\]\nwritten: \[REDACTED:MY_TOKEN\]/, 'its shell reads the file, the model gets it redacted');
  assert.match(b.fake.requests[2]!.body.system!, /the key starts \[REDACTED:MY_TOKEN\]/, 'MEMORY.md in the next run\'s prompt');
  assert.deepEqual(pieces(JSON.stringify(b.fake.requests.map((r) => r.body))), [], 'no request to the model holds a piece of it');

  // Nothing under the home holds it but the agent's own directory and the first session's workspace.
  assert.deepEqual(leaks(b.h.root, [mem.dir, b.store.paths(s1).workspace]), []);
  const versions = fs.readFileSync(mem.log, 'utf8');
  assert.match(versions, /"path":"\[REDACTED:MY_TOKEN\]\.md"/);

  // What a person runs, with and without the secret's variable: nothing prints a piece of it.
  for (const env of [{ OPENBOA_TEST_MEMORY_SECRET: SECRET }, {}]) {
    for (const args of [['memory', 'test', 'show', 'tok.md'], ['memory', 'test', 'show', 'w.md', '--json'], ['memory', 'test', 'show', 'MEMORY.md'], ['memory', 'test', 'log'], ['memory', 'test'], ['learnings', 'test', '--json'], ['events', s1], ['search', 'key']]) {
      const r = await cli(args, { home: b.h.root, env });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.deepEqual(pieces(r.stdout + r.stderr), [], args.join(' '));
    }
  }
  const shown = await cli(['memory', 'test', 'show', 'tok.md'], { home: b.h.root, env: { OPENBOA_TEST_MEMORY_SECRET: SECRET } });
  assert.equal(shown.stdout, '[REDACTED:MY_TOKEN]\n');
});

test('a learning written by hand (or by an older release) with a secret in it reaches the system prompt redacted', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }], env: { OPENBOA_TEST_MEMORY_SECRET: SECRET } });
  b.h.write('environments/secret.yaml', 'env:\n  MY_TOKEN: { secret: { env: OPENBOA_TEST_MEMORY_SECRET } }\n');
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'local' }));
  b.h.write('agents/test/learnings.jsonl', `${JSON.stringify({ id: `lrn_${'c'.repeat(32)}`, kind: 'lesson', text: `deploy with ${SECRET.slice(0, 30)}`, tags: [], session_id: 's', event_id: 'e', wake_id: null, at: '2026-01-01T00:00:00.000Z' })}\n`);
  // A session in an environment without the secret: the run still knows it (another environment's).
  await b.wake(b.session('go'));
  const system = b.fake.requests[0]!.body.system!;
  assert.match(system, /deploy with \[REDACTED:MY_TOKEN\]/);
  assert.deepEqual(pieces(system), []);
});
