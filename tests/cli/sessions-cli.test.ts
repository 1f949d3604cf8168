/**
 * Finding sessions and their agents from the command line: id prefixes
 * wherever an id goes, `sessions --status --limit`, `openboa agents`, and
 * `session create` naming the agents that exist (issue 11, item 7).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { Home } from '../../src/core/foundation/home.js';

async function create(root: string, title?: string): Promise<string> {
  const r = await cliInProcess(['session', 'create', '--agent', 'demo', ...(title ? ['--title', title] : [])], { home: root });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/** Ends a session the way a run does: a session.status_terminated inside a run of its log. */
function terminate(root: string, id: string) {
  const store = new SessionStore(new Home(root), testDeps());
  store.appendEvents(
    id,
    [
      { type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'manual', processed_event_ids: [] },
      { type: 'session.status_terminated', reason: 'done for good' },
    ],
    { wakeId: FIRST_RUN },
  );
  assert.equal(store.snapshot(id).status, 'terminated');
}

/** The shortest prefix of `id` that no other id shares. */
function uniquePrefix(id: string, others: string[]): string {
  for (let n = 1; n <= id.length; n++) {
    const p = id.slice(0, n);
    if (!others.some((o) => o !== id && o.startsWith(p))) return p;
  }
  return id;
}

test('a unique id prefix works wherever a session id does; an ambiguous one is exit 2 listing the candidates; none is exit 3', async (t) => {
  const { root } = tempHome(t);
  const ids = [await create(root), await create(root), await create(root)];
  const [a, b] = ids as [string, string];
  const pa = uniquePrefix(a, ids);
  const pb = uniquePrefix(b, ids);

  const st = await cliInProcess(['status', pa, '--json'], { home: root });
  assert.equal(st.code, 0, st.stderr);
  assert.equal(JSON.parse(st.stdout).id, a);
  const sent = await cliInProcess(['send', pb, 'hello', 'by', 'prefix'], { home: root });
  assert.equal(sent.code, 0, sent.stderr);
  const log = fs.readFileSync(path.join(root, 'sessions', b, 'events.jsonl'), 'utf8');
  assert.match(log, /hello by prefix/);
  for (const args of [['events', pb, '--json'], ['wakes', pb], ['schedule', pb, '--in', '1h'], ['interrupt', pa], ['session', 'update', pa, '--title', 'renamed'], ['wake', pb, '--json']]) {
    const r = await cliInProcess(args, { home: root, env: { ANTHROPIC_API_KEY: '' } });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
  assert.match(fs.readFileSync(path.join(root, 'sessions', a, 'events.jsonl'), 'utf8'), /user\.interrupt/);

  let shared = 0;
  while (ids.every((id) => id[shared] === a[shared])) shared++;
  const common = a.slice(0, shared);
  assert.ok(common.length > 0, 'ids made in one test share their time prefix');
  const amb = await cliInProcess(['status', common], { home: root });
  assert.equal(amb.code, 2, amb.stderr);
  assert.match(amb.stderr, new RegExp(`session id "${common}" is ambiguous: it matches 3: `));
  for (const id of ids) assert.ok(amb.stderr.includes(id), `names ${id}`);
  assert.equal(amb.stderr.trim().split('\n').length, 1);

  const none = await cliInProcess(['send', 'f00dfacef00d', 'hi'], { home: root });
  assert.equal(none.code, 3);
  assert.match(none.stderr, /session "f00dfacef00d" not found: no session in .* has an id that starts with or contains it/);

  // The short form the daemon prints beside a run's lines (the id's last 8 digits), and any unique run of digits.
  const tail = await cliInProcess(['status', a.slice(-8), '--json'], { home: root });
  assert.equal(tail.code, 0, tail.stderr);
  assert.equal(JSON.parse(tail.stdout).id, a);
  const middle = await cliInProcess(['status', b.replace(/-/g, '').slice(14, 26), '--json'], { home: root });
  assert.equal(JSON.parse(middle.stdout).id, b, 'dashes do not count');
  const whole = await cliInProcess(['status', '019a0000-0000-7000-8000-000000000000'], { home: root });
  assert.equal(whole.code, 3, 'a whole id that is not there is still not found');
});

test('sessions lists newest first; --status S and --limit N filter it', async (t) => {
  const { root } = tempHome(t);
  const first = await create(root, 'one');
  const second = await create(root, 'two');
  const third = await create(root, 'three');
  terminate(root, second);
  const list = async (...args: string[]) => {
    const r = await cliInProcess(['sessions', '--json', ...args], { home: root });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; status: string });
  };
  assert.deepEqual((await list()).map((s) => s.id), [third, second, first]);
  assert.deepEqual((await list('--status', 'idle')).map((s) => s.id), [third, first]);
  assert.deepEqual((await list('--status', 'terminated')).map((s) => [s.id, s.status]), [[second, 'terminated']]);
  assert.deepEqual((await list('--limit', '2')).map((s) => s.id), [third, second]);
  assert.deepEqual((await list('--status', 'idle', '--limit', '1')).map((s) => s.id), [third]);
  assert.deepEqual(await list('--status', 'running'), []);
  const text = await cliInProcess(['sessions', '--status', 'rescheduling'], { home: root });
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^no rescheduling sessions in /);
  const table = await cliInProcess(['sessions'], { home: root });
  assert.ok(table.stdout.indexOf(third) < table.stdout.indexOf(first), 'newest first in the table too');
});

test('openboa agents lists agents and environments; a broken definition is listed with its error', async (t) => {
  const h = tempHome(t);
  h.write('agents/broken/agent.yaml', 'provider: carrier-pigeon\n');
  h.write('environments/wide.yaml', 'sandbox: process\nnetwork: host\n');
  h.write('environments/bad.yaml', 'network: sometimes\n');
  h.write('agents/homeless/agent.yaml', 'provider: anthropic\nmodel: x\nenvironment: nowhere\n');
  h.write('agents/misplaced/agent.yaml', 'provider: anthropic\nmodel: x\nenvironment: bad\n');
  const r = await cliInProcess(['agents'], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^AGENT\s+PROVIDER\s+MODEL\s+ENVIRONMENT\s+DESCRIPTION/);
  assert.match(r.stdout, /\nclaude\s+anthropic\s+\S+\s+local\s+A general assistant/);
  assert.match(r.stdout, /\ndemo\s+scripted\s+\S+\s+local\s+Demo agent that works offline/);
  assert.match(r.stdout, /\nbroken\s+error: agents\/broken\/agent\.yaml:1: provider: /);
  assert.match(r.stdout, /\nhomeless\s+error: agents\/homeless\/agent\.yaml: environment: "nowhere" does not load: .*environments\/nowhere\.yaml/);
  assert.match(r.stdout, /\nmisplaced\s+error: agents\/misplaced\/agent\.yaml: environment: "bad" does not load: environments\/bad\.yaml:1: network: /);
  assert.match(r.stdout, /\nENVIRONMENT\s+SANDBOX\s+NETWORK/);
  assert.match(r.stdout, /\nlocal\s+auto\s+none/);
  assert.match(r.stdout, /\nwide\s+process\s+host/);
  assert.match(r.stdout, /\nbad\s+error: environments\/bad\.yaml:1: network: /);

  const json = await cliInProcess(['agents', '--json'], { home: h.root });
  const data = JSON.parse(json.stdout);
  assert.deepEqual(data.agents.map((a: { id: string }) => a.id), ['broken', 'claude', 'demo', 'homeless', 'misplaced']);
  assert.equal(data.agents[2].provider, 'scripted');
  assert.match(data.agents[3].error, /environment: "nowhere" does not load/);
  assert.match(data.agents[0].error, /provider/);
  assert.deepEqual(data.environments.map((e: { id: string; network?: string }) => [e.id, e.network ?? null]), [['bad', null], ['local', 'none'], ['wide', 'host']]);

  const empty = tempHome(t, { bundled: false });
  const none = await cliInProcess(['agents'], { home: empty.root });
  assert.equal(none.code, 0);
  assert.match(none.stdout, /no agents in .*openboa init/);
});

test('session create --agent nope is exit 3 naming the agents that exist (and --env nope the environments)', async (t) => {
  const h = tempHome(t);
  const r = await cliInProcess(['session', 'create', '--agent', 'nope'], { home: h.root });
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /^openboa: agent "nope" not found: agents\/nope\/agent\.yaml does not exist; agents in this home: claude, demo \(openboa agents lists them\)\n$/);
  const env = await cliInProcess(['session', 'create', '--agent', 'demo', '--env', 'nope', '--json'], { home: h.root });
  assert.equal(env.code, 3);
  const err = JSON.parse(env.stderr).error;
  assert.equal(err.code, 'not_found');
  assert.match(err.message, /environment "nope" not found: .*; environments in this home: local/);
  const empty = tempHome(t, { bundled: false });
  const bare = await cliInProcess(['session', 'create', '--agent', 'demo'], { home: empty.root });
  assert.equal(bare.code, 3);
  assert.match(bare.stderr, /this home \(.*\) has no agents: openboa init creates the bundled ones/);
});
