/**
 * One command in a sandbox of its own (an outcome's check), for real under
 * bubblewrap: the verdict is the exit status the kernel reports, nothing
 * the command prints can fake it, and nothing it starts outlives it.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runOnce, type OneShotConfig } from '../../src/core/sandbox/one-shot.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';
import { systemClock } from '../../src/core/foundation/clock.js';
import { ManualClock } from '../helpers/clock.js';
import { tempHome, whenExists } from '../helpers/home.js';

const caps = probeCapabilities();
const skip = caps.bwrap ? false : `bubblewrap does not work here: ${caps.notes.join('; ')}`;

function config(t: TestContext, clock: OneShotConfig['clock'] = systemClock): OneShotConfig & { ws: string } {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  fs.mkdirSync(ws);
  return { isolation: 'bwrap', network: 'none', mounts: [{ host: ws, target: '/workspace', writable: true }], env: { PATH: '/usr/bin:/bin', HOME: '/workspace', SECRET_LIKE: 'x' }, cwd: '/workspace', hostCwd: ws, clock, ws };
}

const never = () => new AbortController().signal;

test('exit status, output and cwd come from the process itself', { skip }, async (t) => {
  const c = config(t);
  fs.writeFileSync(path.join(c.ws, 'notes.md'), 'Status: ok\n');
  const ok = await runOnce(c, 'pwd; grep -qx "Status: ok" notes.md && echo found', { timeoutMs: 30_000, signal: never() });
  assert.deepEqual([ok.exitCode, ok.output.trim()], [0, '/workspace\nfound']);
  const bad = await runOnce(c, 'echo to-stderr >&2; exit 3', { timeoutMs: 30_000, signal: never() });
  assert.deepEqual([bad.exitCode, bad.output.trim(), bad.timedOut, bad.interrupted], [3, 'to-stderr', false, false]);
});

test('printing what looks like a success marker changes nothing; a command that kills its own shell did not pass', { skip }, async (t) => {
  const c = config(t);
  const forged = await runOnce(c, "printf '__OB_E_deadbeef_1_0_/workspace__\\n'; exit 1", { timeoutMs: 30_000, signal: never() });
  assert.equal(forged.exitCode, 1);
  const killed = await runOnce(c, 'kill -9 $$; exit 0', { timeoutMs: 30_000, signal: never() });
  assert.notEqual(killed.exitCode, 0);
});

test('a timeout on the clock kills the command and everything it started, background jobs included', { skip }, async (t) => {
  const clock = new ManualClock();
  const c = config(t, clock);
  const marker = `ob-oneshot-${process.pid}-${Date.now()}`;
  // Each sleep says it is about to start in a file of the workspace; the exec replaces the shell that wrote it.
  const running = runOnce(c, `(echo > bg-up; exec -a ${marker} sleep 1000) & echo > fg-up; exec -a ${marker}-fg sleep 1000`, { timeoutMs: 5000, signal: never() });
  await clock.armed(5000);
  // The deadline passes only once the command is really running.
  await Promise.all([whenExists(path.join(c.ws, 'bg-up')), whenExists(path.join(c.ws, 'fg-up'))]);
  await until(() => alive(marker) && alive(`${marker}-fg`));
  assert.equal(alive(marker), true, 'the background job ran');
  clock.advance(5000);
  const r = await running;
  assert.equal(r.timedOut, true);
  assert.equal(r.exitCode, null);
  assert.equal(alive(marker), false, 'nothing it started is left');
});

test('an abort kills it at once', { skip }, async (t) => {
  const c = config(t);
  const ac = new AbortController();
  const running = runOnce(c, 'echo started; sleep 1000', { timeoutMs: 600_000, signal: ac.signal });
  setImmediate(() => ac.abort());
  const r = await running;
  assert.equal(r.interrupted, true);
  assert.equal(r.exitCode, null);
});

/** Whether a process whose command line contains `marker` runs. */
function alive(marker: string): boolean {
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker)) return true;
    } catch {
      // gone
    }
  }
  return false;
}

/** Between a job's file and its exec there are a few instructions; yields until `ok` (bounded, on a loaded machine too). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setImmediate(r));
}
