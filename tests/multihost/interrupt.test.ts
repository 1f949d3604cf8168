/**
 * An interrupt from another host reaches a run in flight, over a real
 * network file system (sshfs from an sshd on 127.0.0.1, mounted as hosts a
 * and b, with the attribute cache of about a second that docs/daemon.md
 * asks for). A `--poll` daemon on host a runs a session whose model asks
 * for `sleep 300` in its shell; `openboa interrupt` on host b (a shared
 * home: the interrupt goes into the session's inbox/, not the log) must
 * cut that command short: host a's run moves the interrupt into its log
 * while it waits on the tool (run/inbox-during-run.ts), kills the command
 * and ends idle, long before the command would have ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { missing, onHost, signalOnHost, sshfsHome } from '../helpers/sshfs-home.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { until } from '../helpers/until.js';
import { onJsonLines, reapedChildren, writeMultihostHome } from '../helpers/multihost-home.js';

const why = missing();
/** How long the command would run if nothing cut it short: far longer than any wait below. */
const SLEEP_S = 300;

test('over sshfs, an interrupt sent on host b cuts short a shell command of a run on host a', { skip: why ?? false, timeout: 180_000 }, async (t) => {
  const nfs = await sshfsHome(['a', 'b']);
  const children = reapedChildren(t, nfs);
  const store = writeMultihostHome(nfs.export, { turns: [{ tool_calls: [{ name: 'bash', input: { command: `sleep ${SLEEP_S}` } }] }], fallback: 'stopped' });
  const id = createSession(store, { agent: 'mh' }).id;
  const log = () => readLines(store.paths(id).events).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);

  const lines: Array<Record<string, unknown>> = [];
  const argv = onHost('host-a', [process.execPath, CLI, '--home', nfs.mounts.a!, 'daemon', '--json', '--allow-multiple', '--poll']);
  const daemon = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(daemon);
  onJsonLines(daemon.stdout!, (rec) => lines.push(rec));
  await until(() => lines.some((l) => l.kind === 'daemon_started'), 60_000);

  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, '--home', nfs.mounts.b!, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, `openboa ${args.join(' ')}: ${r.stderr}`);
  };
  cli('send', id, 'run the long command');
  // The command is running on host a: its tool use is in the log and no result yet.
  await until(() => log().some((e) => e.type === 'agent.tool_use'), 60_000);
  assert.equal(log().some((e) => e.type === 'agent.tool_result'), false, 'the command is still running');
  const running = log().find((e) => e.type === 'session.status_running')!.wake_id;

  const sent = Date.now();
  cli('interrupt', id, '--reason', 'enough');
  await until(() => log().some((e) => e.type === 'session.status_idle'), 60_000);
  const took = Date.now() - sent;

  const events = log();
  const interrupt = events.find((e) => e.type === 'user.interrupt');
  assert.ok(interrupt, 'the interrupt is in the log');
  const result = events.find((e) => e.type === 'agent.tool_result')!;
  assert.equal(result.is_error, true);
  assert.match(JSON.stringify(result.content), /interrupted/);
  const idle = events.find((e) => e.type === 'session.status_idle')!;
  assert.equal(idle.wake_id, running, 'the run in flight ended itself; no second run was needed to stop it');
  assert.ok(took < SLEEP_S * 1000 / 10, `the run ended ${took} ms after the interrupt`);

  signalOnHost(daemon.pid!, 'SIGTERM');
  await new Promise((r) => (daemon.exitCode === null && daemon.signalCode === null ? daemon.once('exit', r) : r(null)));
  t.diagnostic(`interrupt on host b to the run on host a ending: ${took} ms`);
});
