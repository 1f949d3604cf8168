/**
 * The real shell: bash in node-pty inside bubblewrap. These tests need
 * bwrap (installed by .ci/run); without it they are skipped with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { PtyShell, KILL_GRACE_MS } from '../../src/core/sandbox/pty-shell.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';
import { systemClock } from '../../src/core/foundation/clock.js';
import { tempHome, REPO } from '../helpers/home.js';

const caps = probeCapabilities();
const skip = caps.bwrap ? false : `bubblewrap does not work here: ${caps.notes.join('; ')}`;

async function shell(t: import("node:test").TestContext, network: 'none' | 'host' = 'none') {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  const rt = path.join(h.root, 'rt');
  fs.mkdirSync(ws);
  fs.mkdirSync(rt);
  fs.writeFileSync(path.join(rt, 'fact.txt'), 'a fact');
  const sh = await PtyShell.start({
    isolation: 'bwrap',
    network,
    mounts: [
      { host: ws, target: '/workspace', writable: true },
      { host: rt, target: '/runtime', writable: false },
    ],
    env: { PATH: '/usr/bin:/bin', HOME: '/workspace', TERM: 'dumb', GREETING: 'hi' },
    cwd: '/workspace',
    hostCwd: ws,
    clock: systemClock,
  });
  t.after(() => sh.kill());
  return { sh, ws, rt, root: h.root };
}

const run = (sh: PtyShell, cmd: string, timeoutMs = 10_000) => sh.exec(cmd, { timeoutMs });

test('cd and export persist between commands; exit codes and output come back', { skip }, async (t) => {
  const { sh } = await shell(t);
  assert.deepEqual(await run(sh, 'echo "$GREETING"; pwd').then((r) => [r.output, r.exitCode, r.cwd]), ['hi\n/workspace', 0, '/workspace']);
  await run(sh, 'mkdir -p deep/er && cd deep/er && export SECRET_WORD=swordfish');
  const r = await run(sh, 'pwd; echo $SECRET_WORD; false');
  assert.equal(r.output, '/workspace/deep/er\nswordfish');
  assert.equal(r.exitCode, 1);
  assert.equal(r.cwd, '/workspace/deep/er');
  const multi = await run(sh, 'for i in 1 2 3; do\n  echo "line $i"\ndone\ncat <<EOF\nheredoc ok\nEOF');
  assert.equal(multi.output, 'line 1\nline 2\nline 3\nheredoc ok');
  const long = await run(sh, `echo ${'z'.repeat(20_000)} | wc -c`);
  assert.equal(long.output.trim(), '20001', 'a command longer than a tty line arrives whole');
});

test('the workspace is read-write, /runtime and system dirs read-only, host paths invisible', { skip }, async (t) => {
  const { sh, ws } = await shell(t);
  await run(sh, 'echo written > /workspace/out.txt');
  assert.equal(fs.readFileSync(path.join(ws, 'out.txt'), 'utf8'), 'written\n');
  assert.equal((await run(sh, 'cat /runtime/fact.txt')).output, 'a fact');
  assert.match((await run(sh, 'touch /runtime/x 2>&1')).output, /Read-only file system/);
  assert.match((await run(sh, 'touch /usr/x 2>&1')).output, /Read-only file system/);
  const probe = await run(sh, `ls ${REPO} 2>&1; ls /home /root 2>&1; cat /etc/hostname 2>&1; id -u`);
  assert.match(probe.output, new RegExp(`cannot access '${REPO}'`));
  assert.match(probe.output, /cannot access '\/home'/);
  assert.match(probe.output, /1000$/);
  assert.doesNotMatch((await run(sh, 'ls /')).output, /\bhome\b|\broot\b|\bsrv\b/);
});

test('the network is closed under network: none', { skip }, async (t) => {
  const { sh } = await shell(t, 'none');
  const r = await run(sh, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; getent hosts example.com || echo no-dns; (exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 || echo no-route");
  assert.match(r.output, /^lo$/m);
  assert.doesNotMatch(r.output, /^eth|^ens/m);
  assert.match(r.output, /no-dns/);
  assert.match(r.output, /no-route/);
});

test('a timeout kills the command (its process group) and keeps the shell', { skip }, async (t) => {
  const { sh } = await shell(t);
  await run(sh, 'cd /tmp && export KEEP=1');
  const r = await run(sh, 'sleep 60', 300);
  assert.equal(r.timedOut, true);
  assert.equal(r.exitCode, null);
  assert.ok(r.durationMs < 300 + KILL_GRACE_MS + 1500, `took ${r.durationMs} ms`);
  const after = await run(sh, 'echo $KEEP; pwd; pgrep -c sleep || true');
  assert.equal(after.output, '1\n/tmp\n0');
});

test('a command that ignores Ctrl-C gets the whole sandbox killed; the next shell starts fresh', { skip }, async (t) => {
  const { sh } = await shell(t);
  const marker = `openboa-test-${process.pid}-${Date.now()}`;
  const r = await run(sh, `trap '' INT; (exec -a ${marker} sleep 120) & wait`, 300);
  assert.equal(r.timedOut, true);
  assert.equal(sh.alive, false);
  await new Promise((res) => setTimeout(res, 200));
  // The bracket keeps pgrep from matching its own command line.
  assert.equal(execSync(`pgrep -f '[${marker[0]}]${marker.slice(1)}' || true`).toString().trim(), '', 'no process of the sandbox survives');
});

test('an interrupt signal kills the running command at once (not after its 60 s)', { skip }, async (t) => {
  const { sh } = await shell(t);
  const ac = new AbortController();
  const p = sh.exec('sleep 60', { timeoutMs: 60_000, signal: ac.signal });
  setTimeout(() => ac.abort(), 200);
  const t0 = Date.now();
  const r = await p;
  assert.equal(r.interrupted, true);
  // Tells a kill from the command's end with room for a loaded machine; the latency itself is a benchmark's.
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms after the abort`);
});

test('exit ends the shell; the result says so', { skip }, async (t) => {
  const { sh } = await shell(t);
  const r = await run(sh, 'echo bye; exit 3');
  assert.equal(r.shellDied, true);
  assert.equal(r.exitCode, 3);
  assert.equal(r.output, 'bye');
  assert.equal(sh.alive, false);
});

test('unshare-net (sandbox: auto without bwrap): the network is closed, files are not confined', { skip: caps.unshare ? false : `unshare does not work here: ${caps.notes.join('; ')}` }, async (t) => {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  fs.mkdirSync(ws);
  const sh = await PtyShell.start({ isolation: 'unshare-net', network: 'none', mounts: [], env: { PATH: '/usr/bin:/bin', HOME: ws }, cwd: ws, hostCwd: ws, clock: systemClock });
  t.after(() => sh.kill());
  const r = await sh.exec("pwd; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; (exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 || echo no-route", { timeoutMs: 10_000 });
  assert.match(r.output, new RegExp(`^${ws}$`, 'm'));
  assert.match(r.output, /^lo$/m);
  assert.match(r.output, /no-route/);
});

test('exported variables outlive the shell: the next shell (a later run, another daemon) exports them again inside the sandbox; never a secret; restart starts clean', { skip }, async (t) => {
  const { ShellSession } = await import('../../src/core/sandbox/shell-session.js');
  const { Redactor } = await import('../../src/core/foundation/redact.js');
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  const rt = path.join(h.root, 'rt');
  fs.mkdirSync(ws);
  fs.mkdirSync(rt);
  const secret = 'tok-0123456789abcdef0123456789abcdef';
  const session = () =>
    new ShellSession({
      isolation: 'bwrap',
      network: 'none',
      mounts: [{ host: ws, target: '/workspace', writable: true }],
      env: { PATH: '/usr/bin:/bin', HOME: '/workspace', TERM: 'dumb', MY_TOKEN: secret },
      homeDir: '/workspace',
      workspaceHost: ws,
      runtimeDir: rt,
      redactor: new Redactor({ MY_TOKEN: secret }),
      clock: systemClock,
    });
  const opts = { timeoutMs: 10_000, signal: new AbortController().signal };
  const first = session();
  t.after(() => first.close());
  await first.run(`export FOO=1 MULTI=$'two\\nlines\\n' QUOTE="it's \\"quoted\\" \\$HOME" COPY="$MY_TOKEN" PIECE="\${MY_TOKEN:4:20}" PATH="/workspace/bin:$PATH"; mkdir -p sub && cd sub`, opts);
  // A cwd named after the secret is not recorded as it is either.
  await first.run('mkdir -p "/workspace/$MY_TOKEN" && cd "/workspace/$MY_TOKEN"', opts);
  assert.ok(!fs.readFileSync(path.join(rt, 'shell.json'), 'utf8').includes(secret.slice(4, 20)), 'no secret in the recorded cwd');
  await first.run('cd /workspace/sub', opts);
  first.close();
  const saved = JSON.parse(fs.readFileSync(path.join(rt, 'shell.json'), 'utf8'));
  assert.deepEqual(saved.exported, { FOO: '1', MULTI: 'two\nlines\n', PATH: '/workspace/bin:/usr/bin:/bin', QUOTE: 'it\'s "quoted" $HOME' });
  assert.ok(!fs.readFileSync(path.join(rt, 'shell.json'), 'utf8').includes(secret.slice(4, 20)), 'no secret, whole or in part, in runtime/');

  // A new ShellSession reads runtime/shell.json, as the next run (or a restarted daemon) does.
  const second = session();
  t.after(() => second.close());
  const r = await second.run('printf "%s|%s|%s|%s|%s" "$FOO" "$MULTI" "$QUOTE" "${COPY:-none}" "$(pwd)"; echo; echo "path=$PATH"', opts);
  assert.equal(r.output, `1|two\nlines\n|it's "quoted" $HOME|none|/workspace/sub\npath=/workspace/bin:/usr/bin:/bin`);
  // The variables were set inside the sandbox, not on the process that starts it (bwrap, on the host).
  const ps = execSync(`ps -eo pid,args | grep '[b]wrap' | awk '{print $1}'`).toString().trim().split('\n').filter(Boolean);
  let checked = 0;
  for (const pid of ps) {
    let env = '';
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone, or another user's
    }
    // A PATH (or an LD_PRELOAD) there would make the host run the agent's code before the sandbox exists.
    if (!env.includes(`MY_TOKEN=${secret}`)) continue; // another test's sandbox
    checked += 1;
    assert.ok(!env.includes('/workspace/bin') && !env.includes('FOO=1'), `the host process ${pid} carries no exported variable`);
  }
  assert.ok(checked >= 1, 'the shell\'s bwrap process was found and looked at');
  await second.restart();
  const clean = await second.run('echo "${FOO:-unset}"', opts);
  assert.equal(clean.output, 'unset');
});

/** Resolves once `file` exists (a watch on its directory says when to look). */
function fileAppears(file: string): Promise<void> {
  return new Promise((resolve) => {
    const w = fs.watch(path.dirname(file), () => check());
    const check = () => {
      if (!fs.existsSync(file)) return;
      w.close();
      resolve();
    };
    check();
  });
}

test('output no command reads (a program left running between commands) is not held without bound', { skip }, async (t) => {
  const { sh, ws } = await shell(t);
  // 30 MB printed once the command that started it ended (the fifo says when); `done` is touched once the last byte went to the terminal.
  await run(sh, 'mkfifo /workspace/go; (read -r _ < /workspace/go; head -c 30000000 /dev/zero | tr "\\0" a; touch /workspace/done) &');
  fs.writeFileSync(path.join(ws, 'go'), 'go\n');
  await fileAppears(path.join(ws, 'done'));
  assert.ok(sh.pendingChars < 1_000_000, `${sh.pendingChars} characters held`);
  assert.equal((await run(sh, 'echo after')).output, 'after', 'the next command is framed as ever');
});

test('a command that learnt its end marker\'s token and prints the marker\'s start, then without end, is not held whole', { skip }, async (t) => {
  const { sh, ws } = await shell(t);
  // A DEBUG trap sees every command the shell runs, the protocol's printf of the start marker too (nonce and token).
  await run(sh, `trap 'case "$BASH_COMMAND" in "printf '"'"'__OB_S_"*) set -- $BASH_COMMAND; echo "$3 $4" > /tmp/token;; esac' DEBUG`);
  const p = run(sh, `mkfifo /workspace/go; read a b < /tmp/token; printf '\\n__OB_E_%s_%s_' $a $b; head -c 5000000 /dev/zero | tr "\\0" y; touch /workspace/done; read -r _ < /workspace/go`, 60_000);
  await fileAppears(path.join(ws, 'done'));
  assert.ok(sh.pendingChars < 1_000_000, `${sh.pendingChars} characters held`);
  fs.writeFileSync(path.join(ws, 'go'), 'go\n'); // the command ends as any does
  const r = await p;
  assert.equal(r.exitCode, 0);
  assert.equal(r.output.match(/y/g)?.length, 5_000_000, 'what it printed is output, every character of it');
});

test('a cwd longer than PATH_MAX: the command still ends as it should; the recorded cwd stays the last one that fits', { skip }, async (t) => {
  const { sh } = await shell(t);
  // 125 000 characters (an exported PWD of 128 KiB or more would stop every program from starting): a marker with
  // it whole, besides the variables (PWD among them), would be longer than an end marker may be.
  const deep = await run(sh, 'd=$(printf "d%.0s" $(seq 250)); for i in $(seq 500); do mkdir "$d" && cd "$d" || break; done; [ ${#PWD} -gt 125000 ] && echo long', 60_000);
  assert.equal(deep.output, 'long');
  assert.equal(deep.exitCode, 0);
  assert.equal(deep.cwd, '/workspace');
  // rm walks beneath the directory (the temp home's removal would hit the path's length).
  assert.equal((await run(sh, 'cd /workspace && rm -rf d* && echo still')).output, 'still');
});

test('a long exported value and a long cwd (longer than a terminal line) do not stop the next shell from starting', { skip }, async (t) => {
  const { ShellSession } = await import('../../src/core/sandbox/shell-session.js');
  const { Redactor } = await import('../../src/core/foundation/redact.js');
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  const rt = path.join(h.root, 'rt');
  fs.mkdirSync(ws);
  fs.mkdirSync(rt);
  const session = () =>
    new ShellSession({
      isolation: 'bwrap',
      network: 'none',
      mounts: [{ host: ws, target: '/workspace', writable: true }],
      env: { PATH: '/usr/bin:/bin', HOME: '/workspace', TERM: 'dumb' },
      homeDir: '/workspace',
      workspaceHost: ws,
      runtimeDir: rt,
      redactor: new Redactor({}),
      clock: systemClock,
    });
  const opts = { timeoutMs: 10_000, signal: new AbortController().signal };
  const first = session();
  t.after(() => first.close());
  // 6000 characters of value; a cwd of 15 names of 250 quotes each (3,765 bytes, four times that quoted).
  await first.run(`export BIG=$(head -c 6000 /dev/zero | tr '\\0' x); q=$(printf "'%.0s" $(seq 250)); for i in $(seq 15); do mkdir "$q" && cd "$q"; done`, opts);
  first.close();
  const second = session();
  t.after(() => second.close());
  const r = await second.run('echo "${#BIG} $(pwd | wc -c)"', opts);
  assert.equal(r.output, '6000 3776');
});
