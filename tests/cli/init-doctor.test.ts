/**
 * A home anywhere: `openboa init [dir]` makes a working home from the
 * package's own bundled agents and environment, never overwriting a file;
 * `openboa doctor` says whether sessions can run there (issue 11, item 9).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli, cliInProcess } from '../helpers/cli.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { REPO, tempHome } from '../helpers/home.js';
import { lockHome } from '../../src/daemon/home-lock.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';
import { Home } from '../../src/core/foundation/home.js';
import { systemClock } from '../../src/core/foundation/clock.js';

const BUNDLED = ['agents/demo/agent.yaml', 'agents/demo/AGENTS.md', 'agents/demo/script.yaml', 'agents/demo/skills/notes/SKILL.md', 'agents/claude/agent.yaml', 'environments/local.yaml'];

function tempDir(t: { after(fn: () => void): void }): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-init-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

test('init [dir] creates a working home from the package, outside the repository, and says what it created', async (t) => {
  const parent = tempDir(t);
  // Run from a folder that is not the package: the files come from the installed package, not the cwd.
  // The binary (dist/), which finds the bundled files from where it is installed.
  const r = await cli(['init', 'my-home'], { cwd: parent });
  assert.equal(r.code, 0, r.stderr);
  const home = path.join(parent, 'my-home');
  assert.match(r.stdout, new RegExp(`^created a home in ${home}:\\n`));
  for (const f of BUNDLED) {
    assert.equal(fs.readFileSync(path.join(home, f), 'utf8'), fs.readFileSync(path.join(REPO, f), 'utf8'), f);
    assert.ok(r.stdout.includes(`  ${f}\n`), `lists ${f}`);
  }
  assert.ok(fs.statSync(path.join(home, 'sessions')).isDirectory());
  assert.match(r.stdout, /\n {2}cd my-home\n/);

  // The new home works: a demo session runs there.
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home })).stdout.trim();
  await cliInProcess(['send', id, 'hello'], { home });
  const run = await cliInProcess(['wake', id], { home, env: { ANTHROPIC_API_KEY: '' } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /idle, end_turn/);
});

test('init never overwrites: existing files are kept and listed; a second run creates nothing', async (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/demo/agent.yaml', '# mine\nprovider: scripted\nscript: script.yaml\n');
  const r = await cliInProcess(['init', '--json'], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.home, h.root);
  assert.deepEqual(out.kept, ['agents/demo/agent.yaml', 'sessions/']);
  assert.deepEqual(out.created, BUNDLED.filter((f) => f !== 'agents/demo/agent.yaml'));
  assert.equal(fs.readFileSync(path.join(h.root, 'agents/demo/agent.yaml'), 'utf8'), '# mine\nprovider: scripted\nscript: script.yaml\n');
  const again = await cliInProcess(['init'], { home: h.root });
  assert.equal(again.code, 0);
  assert.match(again.stdout, /is already a home; nothing to create/);
  const file = h.write('not-a-dir', 'x');
  const bad = await cliInProcess(['init', file], { home: h.root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /is a file, not a folder/);
});

/** A home whose only agent runs offline and whose environment needs no sandbox: usable anywhere. */
function offlineHome(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  fs.rmSync(path.join(h.root, 'agents', 'claude'), { recursive: true });
  h.write('environments/local.yaml', 'sandbox: process\nnetwork: host\n');
  return h;
}

type Doctor = { home: string; ok: boolean; checks: Array<{ name: string; status: string; message: string }> };
const check = (d: Doctor, name: string) => d.checks.find((c) => c.name === name)!;

test('doctor: exit 0 and ok when every check passes; it names the sandbox, the home, the key and the daemon', async (t) => {
  const h = offlineHome(t);
  const r = await cliInProcess(['doctor', '--json'], { home: h.root, env: { ANTHROPIC_API_KEY: '' } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const d = JSON.parse(r.stdout) as Doctor;
  assert.equal(d.ok, true);
  assert.deepEqual(d.checks.map((c) => c.name), ['home', 'definitions', 'sandbox', 'models', 'ptrace', 'daemon', 'shared home']);
  assert.equal(check(d, 'home').status, 'ok');
  assert.match(check(d, 'home').message, /is writable/);
  assert.equal(check(d, 'models').status, 'ok');
  assert.equal(check(d, 'models').message, 'demo: offline');
  const bwrap = probeCapabilities().bwrap;
  assert.equal(check(d, 'sandbox').status, bwrap ? 'ok' : 'warn');
  assert.match(check(d, 'sandbox').message, bwrap ? /^bubblewrap works here/ : /^bubblewrap does not work here/);
  assert.equal(check(d, 'daemon').status, 'info');
  assert.match(check(d, 'daemon').message, /no daemon is running on this home/);

  const lock = await lockHome(new Home(h.root), systemClock);
  t.after(() => lock.release());
  const text = await cliInProcess(['doctor'], { home: h.root });
  assert.equal(text.code, 0);
  assert.match(text.stdout, new RegExp(`^openboa doctor: home ${h.root}\\n`));
  assert.match(text.stdout, new RegExp(`\\n {2}ok {4}daemon {7}a daemon is running on this home \\(pid ${process.pid}`));
  assert.match(text.stdout, /\nready: sessions can run here\n$/);
});

test('doctor checks each agent\'s model key where it counts: a fresh home is ready (the demo needs none), a key missing from this shell is a warning, a home where no agent can run fails', async (t) => {
  const h = tempHome(t);
  const noKey = await cliInProcess(['doctor'], { home: h.root, env: { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' } });
  assert.equal(noKey.code, 0, noKey.stdout);
  assert.match(noKey.stdout, /\n {2}warn {2}models {7}claude: ANTHROPIC_API_KEY is not set in this shell: a daemon started from this shell could not run claude \(set it where the daemon runs\); demo: offline\n/);
  assert.match(noKey.stdout, /\nready: sessions can run here\n$/);
  const withKey = JSON.parse((await cliInProcess(['doctor', '--json'], { home: h.root, env: { ANTHROPIC_API_KEY: 'sk-test-not-printed' } })).stdout) as Doctor;
  assert.equal(check(withKey, 'models').status, 'ok');
  assert.match(check(withKey, 'models').message, /^claude: ANTHROPIC_API_KEY is set in this shell; demo: offline \(keys not checked against the APIs\)$/);
  assert.ok(!JSON.stringify(withKey).includes('sk-test-not-printed'), 'the key itself is never printed');
  fs.rmSync(path.join(h.root, 'agents', 'demo'), { recursive: true });
  const none = await cliInProcess(['doctor'], { home: h.root, env: { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' } });
  assert.equal(none.code, 1, none.stdout);
  assert.match(none.stdout, /\n {2}fail {2}models {7}no agent can run: claude: ANTHROPIC_API_KEY is not set in this shell/);
  assert.match(none.stdout, /\nnot ready: models failed\n$/);

  h.write('agents/broken/agent.yaml', 'limits: 12\n');
  const broken = await cliInProcess(['doctor', '--json'], { home: h.root, env: { ANTHROPIC_API_KEY: 'k' } });
  assert.equal(broken.code, 1);
  const b = JSON.parse(broken.stdout) as Doctor;
  assert.equal(b.ok, false);
  assert.equal(check(b, 'definitions').status, 'fail');
  assert.match(check(b, 'definitions').message, /1 do not load: agents\/broken\/agent\.yaml:1: limits: /);

  const missing = path.join(h.root, 'nowhere');
  const gone = await cliInProcess(['doctor', '--json'], { home: missing, cwd: h.root });
  assert.equal(gone.code, 1);
  const g = JSON.parse(gone.stdout) as Doctor;
  assert.match(check(g, 'home').message, /does not exist \(openboa init .* creates a home there\)/);
});

test('doctor warns when a process may trace its parent (an outcome check running agent code could be tampered with)', async () => {
  const { checkPtrace } = await import('../../src/cli/commands/doctor.js');
  assert.equal(checkPtrace(() => '0\n').status, 'warn');
  assert.match(checkPtrace(() => '0\n').message, /sysctl kernel\.yama\.ptrace_scope=1/);
  assert.equal(checkPtrace(() => '1\n').status, 'ok');
  assert.equal(checkPtrace(() => { throw new Error('ENOENT'); }).status, 'warn');
});

test("doctor reads the running daemon's environment for the keys (only their names), not this shell's", async (t) => {
  const h = tempHome(t);
  const bare = { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' };
  const withKey = spawnDaemon(t, h.root, { ANTHROPIC_API_KEY: 'sk-daemon-only-never-printed' });
  await withKey.line((l) => l.kind === 'daemon_started');
  const ok = await cli(['doctor', '--json'], { home: h.root, env: bare });
  const m = check(JSON.parse(ok.stdout) as Doctor, 'models');
  assert.equal(m.status, 'ok', m.message);
  assert.match(m.message, new RegExp(`claude: ANTHROPIC_API_KEY is set in the running daemon \\(pid ${withKey.child.pid}\\)`));
  assert.ok(!ok.stdout.includes('sk-daemon-only-never-printed'));
  assert.equal(await withKey.term(), 0);

  const without = spawnDaemon(t, h.root, bare);
  await without.line((l) => l.kind === 'daemon_started');
  const bad = await cli(['doctor', '--json'], { home: h.root, env: { ANTHROPIC_API_KEY: 'sk-shell' } });
  assert.equal(bad.code, 1);
  const b = check(JSON.parse(bad.stdout) as Doctor, 'models');
  assert.equal(b.status, 'fail');
  assert.match(b.message, new RegExp(`claude: ANTHROPIC_API_KEY is not set in the running daemon \\(pid ${without.child.pid}\\): the daemon cannot run claude`));
});

test('a folder that is not a home: commands exit 3 saying so (a typo is never an empty home); daemon and start refuse it unless --init', async (t) => {
  const dir = tempDir(t);
  const typo = path.join(dir, 'typo');
  const ls = await cliInProcess(['sessions'], { home: typo });
  assert.equal(ls.code, 3, ls.stdout);
  assert.match(ls.stderr, new RegExp(`${typo} does not exist: not an openboa home \\(openboa init ${typo} makes one there`));
  fs.mkdirSync(path.join(dir, 'plain'));
  const plain = await cliInProcess(['sessions', '--json'], { home: path.join(dir, 'plain') });
  assert.equal(plain.code, 3);
  assert.match(JSON.parse(plain.stderr).error.message, /has neither agents\/ nor sessions\/ in it: not an openboa home/);
  for (const cmd of ['daemon', 'start']) {
    const r = await cli([cmd], { home: path.join(dir, 'plain') });
    assert.equal(r.code, 3, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, /not an openboa home \(openboa init .* makes one; or pass --init\)/);
  }
  assert.deepEqual(fs.readdirSync(path.join(dir, 'plain')), [], 'nothing was made there');
  const d = spawnDaemon(t, path.join(dir, 'plain'), {}, ['--init']);
  await d.line((l) => l.kind === 'daemon_started');
  assert.ok(fs.existsSync(path.join(dir, 'plain', 'agents', 'demo', 'agent.yaml')));
  assert.equal(await d.term(), 0);
});
