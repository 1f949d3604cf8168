/**
 * On a shared home a person's events arrive in inbox/ (a rename), not as
 * appends; the run that holds the lease moves them into the log during the
 * run (run/inbox-during-run.ts), so an interrupt cuts a tool in flight short
 * within a look (INBOX_PEEK_MS of the run's clock), and a message or a pause
 * reaches the run at its next step (on any home), as appended ones do. Real files in a
 * temp home; the manual clock stands for the wait.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SessionStore } from '../../src/core/store/session-store.js';
import { interruptSession, sendMessage } from '../../src/core/ops/session-ops.js';
import { pauseSession } from '../../src/core/ops/pause-ops.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { INBOX_PEEK_MS } from '../../src/core/run/inbox-during-run.js';
import { wake } from '../../src/core/run/wake.js';
import { unitRun } from '../helpers/unit-run.js';

/** The lines in inbox/ not yet moved into the log (a file renamed in, not starting with "."). */
const waiting = (dir: string) => fs.readdirSync(dir).filter((n) => !n.startsWith('.'));

test('an interrupt dropped into inbox/ during a long tool call aborts the tool within a look, as an appended one does', async (t) => {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let clock!: ReturnType<typeof unitRun>['deps']['clock'];
  const u = unitRun(t, {
    replies: [{ tools: [{ name: 'bash', input: { command: 'sleep 60' } }] }, { text: 'after the command' }],
    // The command takes 60 s of the run's clock, unless its signal aborts first.
    sandbox: () =>
      new MemorySandbox({
        exec: async (_cmd, o) => {
          started();
          try {
            await clock.sleep(60_000, o.signal);
            return 'slept';
          } catch {
            return { output: '', exitCode: null, interrupted: true };
          }
        },
      }),
  });
  clock = u.deps.clock;
  // The home is shared: the run's store and the interrupt's (from "another host", through inbox/).
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const id = u.newSession();
  sendMessage(u.store, id, 'wait a minute');
  const run = wake({ home: u.h.home, store: shared, deps: u.deps }, id);
  await running;
  const stop = interruptSession(shared, id, 'enough');
  assert.equal(waiting(u.store.paths(id).inbox).length, 1);
  await clock.advance(INBOX_PEEK_MS);
  // Were it not taken in, the command would finish here.
  await clock.advance(60_000);
  const r = await run;
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const ev = u.events(id);
  const result = ev.find((e) => e.type === 'agent.tool_result');
  assert.ok(result?.type === 'agent.tool_result' && result.is_error, 'the command was cut short');
  assert.match(JSON.stringify(result), /interrupted/);
  assert.equal(u.model!.requests.length, 1, 'no model request after the interrupt');
  assert.equal(ev.filter((e) => e.id === stop.id).length, 1, 'the interrupt is in the log once');
  assert.equal(u.store.snapshot(id).pending_events.length, 0, 'and taken in by this run');
  assert.deepEqual(waiting(u.store.paths(id).inbox), []);
});

test('a message and a pause dropped into inbox/ during a run reach it at its next step', async (t) => {
  let shared!: SessionStore;
  let id = '';
  let calls = 0;
  const u = unitRun(t, {
    replies: [{ tools: [{ name: 'bash', input: { command: 'true' } }] }, { tools: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'never asked' }],
    sandbox: () =>
      new MemorySandbox({
        exec: () => {
          calls += 1;
          // While the first command runs, a message; while the second runs, a pause.
          if (calls === 1) sendMessage(shared, id, 'also this');
          if (calls === 2) pauseSession(shared, id, 'hold on');
          return 'ok';
        },
      }),
  });
  shared = new SessionStore(u.h.home, u.deps, { shared: true });
  id = u.newSession();
  sendMessage(u.store, id, 'start');
  const r = await u.run(id);
  // The message was in the second request: taken in mid-run, not left for the next run.
  const second = JSON.stringify(u.model!.requests[1]?.messages ?? []);
  assert.match(second, /also this/);
  // The pause stopped the run before a third request.
  assert.equal(u.model!.requests.length, 2);
  assert.ok(u.events(id).some((e) => e.type === 'session.run_paused'), 'the run stopped for the pause');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.deepEqual(waiting(u.store.paths(id).inbox), []);
});

test('a file the drain refuses during a run is reported once, as information, not as the run’s error', async (t) => {
  let id = '';
  const u = unitRun(t, {
    replies: [{ tools: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'done' }],
    sandbox: () =>
      new MemorySandbox({
        exec: () => {
          // inbox/ is made on first use: a writer makes it (mkdir -p).
          fs.mkdirSync(`${u.store.paths(id).inbox}/not-a-file`, { recursive: true });
          return 'ok';
        },
      }),
  });
  id = u.newSession();
  sendMessage(u.store, id, 'start');
  const r = await u.run(id);
  const reports = u.events(id).filter((e) => e.type === 'session.error');
  assert.equal(reports.length, 1);
  assert.match(JSON.stringify(reports[0]), /not-a-file/);
  assert.equal(reports[0]!.wake_id, r.wake_id, 'reported by the run that refused it');
  assert.equal(u.store.snapshot(id).last_error, null);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
});

/**
 * Makes `dir`/`name` an entry the drain may not rename, as a person sharing
 * the home can: for root (who may rename anything writable), a file marked
 * immutable (EPERM); for anyone else, a folder without write permission
 * (EACCES: renaming a folder rewrites its ".."). Returns what undoes it (the
 * temp home cannot be removed before), or null when this file system cannot
 * mark a file so.
 */
function unmovable(dir: string, name: string): (() => void) | null {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, name);
  if (process.getuid?.() !== 0) {
    fs.mkdirSync(p);
    fs.chmodSync(p, 0o555);
    return () => fs.chmodSync(p, 0o755);
  }
  fs.writeFileSync(p, '{"type":"user.message","content":"stuck"}\n');
  try {
    execFileSync('chattr', ['+i', p], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return () => execFileSync('chattr', ['-i', p], { stdio: 'ignore' });
}

test('an inbox entry the run cannot take is reported once a run, not at every look', async (t) => {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let clock!: ReturnType<typeof unitRun>['deps']['clock'];
  const u = unitRun(t, {
    replies: [{ tools: [{ name: 'bash', input: { command: 'sleep 10' } }] }, { text: 'done' }],
    sandbox: () =>
      new MemorySandbox({
        exec: async () => {
          started();
          await clock.sleep(10_000);
          return 'slept';
        },
      }),
  });
  clock = u.deps.clock;
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const id = u.newSession();
  const undo = unmovable(u.store.paths(id).inbox, 'stuck');
  if (undo === null) return t.skip('this file system cannot mark a file immutable');
  try {
    sendMessage(u.store, id, 'take your time');
    const run = wake({ home: u.h.home, store: shared, deps: u.deps }, id);
    await running;
    // Ten looks while the command runs, then the run's next step: each finds the entry again.
    for (let i = 0; i < 10; i++) await clock.advance(INBOX_PEEK_MS);
    const r = await run;
    assert.deepEqual(r.stop_reason, { type: 'end_turn' });
    const reports = u.events(id).filter((e) => e.type === 'session.error' && /inbox\/stuck: could not be taken/.test(e.error.message));
    assert.equal(reports.length, 1, JSON.stringify(reports.map((e) => e.type === 'session.error' && e.error.message)));
    assert.equal(reports[0]!.wake_id, r.wake_id);
    assert.equal(r.errors.filter((m) => /inbox\/stuck/.test(m)).length, 1);
    assert.ok(fs.existsSync(path.join(u.store.paths(id).inbox, 'stuck')), 'it stays for a later run');
  } finally {
    undo();
  }
});
