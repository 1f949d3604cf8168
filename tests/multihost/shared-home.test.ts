/**
 * Three hosts, one home, over a real network file system: the home is served
 * by an sshd on 127.0.0.1 and mounted over sshfs three times (like NFS:
 * attributes cached, no inotify events for the other clients' writes, no
 * atomic appends across clients). Each daemon runs in its own PID, UTS and
 * mount namespace with its own hostname (`--poll --shard i/3
 * --allow-multiple`), host b's with a clock 5 s ahead. 150 messages go to 15
 * sessions with `openboa send --shared` from all three hosts while daemons
 * are killed with SIGKILL at random moments and restarted, one of them kept
 * down for longer than the lease's stale time. Then, from the logs: every
 * message is in its session's log once and taken in by exactly one run, no
 * two runs of a session interleave, no revisit is consumed twice, no session
 * is left running, and the dead host's sessions were taken by the others.
 *
 * By default scaled to a 2-core machine in about a minute; the sizes are
 * settable (below) for the full scenario (500 messages over 50 sessions).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { missing, onHost, signalOnHost, sshfsHome } from '../helpers/sshfs-home.js';
import { onJsonLines, reapedChildren, writeMultihostHome } from '../helpers/multihost-home.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { shardOf } from '../../src/daemon/shard.js';
import { nextDueMs } from '../../src/core/run/plan.js';
import { inboxHasFiles } from '../../src/core/store/inbox.js';

const HOSTS = ['a', 'b', 'c'] as const;
type Host = (typeof HOSTS)[number];
/**
 * Sizes: OPENBOA_MH_SESSIONS and OPENBOA_MH_MESSAGES; the defaults keep CI at about a minute. The scenario of
 * issue 32 is OPENBOA_MH_SESSIONS=50 OPENBOA_MH_MESSAGES=500. The time limits grow with the messages.
 */
function size(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: expected a whole number of at least 1, got "${v}"`);
  return n;
}
const SESSIONS = size('OPENBOA_MH_SESSIONS', 15);
const MESSAGES = size('OPENBOA_MH_MESSAGES', 150);
const SCALE = Math.max(1, MESSAGES / 150);
/** A lease goes stale after this (LEASE_STALE_MS); stray work is looked for every quarter of it. */
const STALE_MS = 10_000;
/** Host c stays down at most this long waiting for the others to take its work. */
const OUTAGE_MAX_MS = 45_000;

interface Line {
  host: Host;
  at: number;
  rec: Record<string, unknown>;
}

const why = missing();
/** OPENBOA_MH_TRACE=1: the test's progress on stderr (for a run by hand). */
const trace = (m: string) => {
  if (process.env.OPENBOA_MH_TRACE) process.stderr.write(`${new Date().toISOString()} ${m}\n`);
};

test('three hosts on one sshfs home: every message answered once, no overlapping runs, a dead host’s work taken over', { skip: why ?? false, timeout: 300_000 * SCALE }, async (t) => {
  const nfs = await sshfsHome(HOSTS);
  const children = reapedChildren(t, nfs, () => {
    if (!process.env.OPENBOA_MH_TRACE) return;
    const kept = `/tmp/openboa-mh-kept-${Date.now()}`;
    fs.cpSync(nfs.export, kept, { recursive: true });
    fs.writeFileSync(`${kept}/daemon-lines.jsonl`, lines.map((l) => JSON.stringify({ host: l.host, at: new Date(l.at).toISOString(), ...l.rec })).join('\n'));
  });

  // The home, written on the file server's disk: an agent whose script schedules one revisit in its first run.
  const root = nfs.export;
  const store = writeMultihostHome(root, { turns: [{ tool_calls: [{ name: 'schedule_wake', input: { delay_seconds: 3, reason: 'look again' } }] }, { text: 'scheduled' }], fallback: 'answered' });
  // As many sessions in each host's shard, give or take one (more are made than used; the others stay idle).
  const ids: string[] = [];
  while (ids.length < SESSIONS) {
    const id = createSession(store, { agent: 'mh' }).id;
    if (ids.filter((x) => shardOf(x, 3) === shardOf(id, 3)).length < SESSIONS / 3) ids.push(id);
  }

  // A clock 5 s ahead for host b: Date.now and new Date() in its daemon, preloaded.
  const skew = path.join(path.dirname(root), 'skew.mjs');
  fs.writeFileSync(
    skew,
    `const off = 5000; const real = Date.now; const D = Date;
class Skewed extends D { constructor(...a) { if (a.length === 0) super(real() + off); else super(...a); } static now() { return real() + off; } }
globalThis.Date = Skewed;\n`,
  );

  const lines: Line[] = [];
  const daemons = new Map<Host, ChildProcess>();
  const startDaemon = (h: Host) => {
    const shard = `${HOSTS.indexOf(h)}/3`;
    const env = { ...process.env, ...(h === 'b' ? { NODE_OPTIONS: `--import ${skew}` } : {}) };
    const argv = onHost(`host-${h}`, [process.execPath, CLI, '--home', nfs.mounts[h]!, 'daemon', '--json', '--allow-multiple', '--poll', '--shard', shard, '--concurrency', '2']);
    const c = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(c);
    onJsonLines(c.stdout!, (rec) => {
      lines.push({ host: h, at: Date.now(), rec });
      if (rec.kind === 'run_start' || rec.event === 'stray_adopted') trace(`${h} ${rec.kind} ${rec.event ?? ''} ${String(rec.session_id).slice(-6)}`);
    });
    c.stderr!.on('data', () => undefined);
    c.on('exit', () => children.delete(c));
    daemons.set(h, c);
  };
  const cShard = new Set(ids.filter((id) => shardOf(id, 3) === 2));
  /** A run of one of host c's sessions by another host, after `from`. */
  const pickedUp = (l: Line, from: number) => l.rec.kind === 'run_start' && l.host !== 'c' && cShard.has(l.rec.session_id as string) && l.at >= from;
  const kill = async (h: Host) => {
    trace(`kill ${h}`);
    const c = daemons.get(h);
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  };
  for (const h of HOSTS) startDaemon(h);
  const started = (h: Host) => lines.some((l) => l.host === h && l.rec.kind === 'daemon_started');
  const readyBy = Date.now() + 60_000;
  while (!HOSTS.every(started)) {
    assert.ok(Date.now() < readyBy, 'the three daemons did not start within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  trace('daemons started');

  // The senders: from each host, one `openboa send --shared` after another (three at a time in all: more
  // node processes starting at once would hold a 2-core machine for many seconds), to every session in turn.
  const expected = new Map<string, string[]>(ids.map((id) => [id, []]));
  const queues = new Map<Host, Array<{ id: string; text: string }>>(HOSTS.map((h) => [h, []]));
  for (let k = 0; k < MESSAGES; k++) {
    const id = ids[k % SESSIONS]!;
    const host = HOSTS[Math.floor(k / SESSIONS) % 3]!;
    expected.get(id)!.push(`m-${k}`);
    queues.get(host)!.push({ id, text: `m-${k}` });
  }
  const send = (host: Host, id: string, text: string) =>
    new Promise<void>((resolve, reject) => {
      const c = spawn(process.execPath, [CLI, '--home', nfs.mounts[host]!, 'send', id, text, '--shared'], { stdio: ['ignore', 'ignore', 'pipe'] });
      children.add(c);
      let err = '';
      c.stderr!.on('data', (d) => (err += d));
      c.on('exit', (code) => {
        children.delete(c);
        if (code === 0) resolve();
        else reject(new Error(`send from ${host} to ${id} exited ${code}: ${err}`));
      });
    });
  const senders = HOSTS.map(async (h) => {
    for (const m of queues.get(h)!) await send(h, m.id, m.text);
  });

  // The killer: random daemons at random moments, back after a moment; host c, in the middle of the sending,
  // for longer than the stale time, while a and b go on being killed now and then.
  const outage: { from: number; to: number } = { from: 0, to: 0 };
  const pause = (lo: number, hi: number) => new Promise((r) => setTimeout(r, lo + Math.random() * (hi - lo)));
  const bounce = async (h: Host) => {
    await kill(h);
    await pause(300, 1500);
    startDaemon(h);
  };
  const killer = (async () => {
    await pause(1500, 2500);
    await bounce(HOSTS[Math.floor(Math.random() * 3)]!);
    await pause(1000, 2000);
    await kill('c');
    outage.from = Date.now();
    await pause(3000, 6000);
    await bounce(Math.random() < 0.5 ? 'a' : 'b');
    // Down until another host has run one of c's sessions (or OUTAGE_MAX_MS), and at least the stale time.
    while (Date.now() - outage.from < OUTAGE_MAX_MS && (Date.now() - outage.from < STALE_MS || !lines.some((l) => pickedUp(l, outage.from)))) await pause(200, 200);
    outage.to = Date.now();
    startDaemon('c');
    await pause(1000, 3000);
    await bounce(HOSTS[Math.floor(Math.random() * 3)]!);
  })();
  await Promise.all(senders);
  trace('senders done');
  await killer;
  trace('killer done');

  // Done when every message is in and taken in, and no session runs or waits.
  const done = () =>
    ids.every((id) => {
      const s = store.snapshot(id, { persist: false });
      return s.status === 'idle' && s.pending_events.length === 0 && nextDueMs(s) === null && !inboxHasFiles(store.paths(id));
    });
  const deadline = Date.now() + 120_000 * SCALE;
  while (!done()) {
    trace(ids.map((id) => { const s = store.snapshot(id, { persist: false }); return `${s.status[0]}${s.pending_events.length}${nextDueMs(s) === null ? '' : 'w'}${inboxHasFiles(store.paths(id)) ? 'i' : ''}`; }).join(' '));
    assert.ok(Date.now() < deadline, `not settled within ${120 * SCALE} s: ${ids.map((id) => { const s = store.snapshot(id, { persist: false }); return `${id.slice(-6)} ${s.status} pending ${s.pending_events.length} due ${nextDueMs(s)} inbox ${inboxHasFiles(store.paths(id))}`; }).join('; ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const h of HOSTS) signalOnHost(daemons.get(h)!.pid!, 'SIGTERM');
  await Promise.all([...daemons.values()].map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));

  let runs = 0;
  let revisits = 0;
  const consumedTwice: string[] = [];
  for (const id of ids) {
    const raw = readLines(store.paths(id).events).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);
    // Every message once in the log, taken in by exactly one run.
    const msgs = raw.filter((e) => e.type === 'user.message');
    const texts = msgs.map((e) => ((e.content as Array<{ text: string }>)[0]!.text)).sort();
    assert.deepEqual(texts, [...expected.get(id)!].sort(), `session ${id}: the messages in its log`);
    const taken = new Map<string, number>();
    for (const e of raw) if (e.type === 'session.status_running') for (const p of e.processed_event_ids as string[]) taken.set(p, (taken.get(p) ?? 0) + 1);
    for (const m of msgs) assert.equal(taken.get(m.id as string), 1, `session ${id}: message ${m.id} taken in ${taken.get(m.id as string) ?? 0} times`);
    // No two runs interleave: once a run's lines end, its wake_id never appears again after another run's.
    const order: string[] = [];
    for (const e of raw) {
      const w = e.wake_id as string | undefined;
      if (!w) continue;
      if (order[order.length - 1] !== w) {
        assert.ok(!order.includes(w), `session ${id}: run ${w} wrote again after run ${order[order.length - 1]} had begun`);
        order.push(w);
      }
    }
    runs += new Set(raw.filter((e) => e.type === 'session.status_running' && !e.continuation).map((e) => e.wake_id)).size;
    // Every revisit consumed at most once.
    const queue = readLines(store.paths(id).wakeQueue).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);
    const consumed = new Map<string, number>();
    for (const w of queue) if (w.type === 'wake.consumed') consumed.set(w.wake_id as string, (consumed.get(w.wake_id as string) ?? 0) + 1);
    for (const [w, n] of consumed) if (n !== 1) consumedTwice.push(`session ${id}: revisit ${w} consumed ${n} times`);
    // (A first run killed between the model's schedule_wake and its result schedules nothing: that tool use is
    // closed as outcome unknown, never run again.)
    revisits += queue.filter((w) => w.type === 'wake.scheduled').length;
    const s = store.snapshot(id, { persist: false });
    assert.equal(s.status, 'idle', `session ${id} is left ${s.status}`);
  }
  // Host c's sessions that got work while c was down were run by a or b while it was down; how soon is
  // measured from the first message to one of them after c went down.
  const during = lines.filter((l) => pickedUp(l, outage.from) && l.at <= outage.to);
  assert.ok(during.length > 0, `while host c was down (${outage.to - outage.from} ms), hosts a and b ran none of its sessions`);
  // From c's death, or from the first message to one of its sessions after it, whichever came later (work
  // already waiting at the kill counts from the kill).
  const arrivals = [...cShard].flatMap((id) =>
    readLines(store.paths(id).events)
      .lines.map((l) => JSON.parse(l.text) as Record<string, unknown>)
      .filter((e) => e.type === 'user.message' && Date.parse(e.created_at as string) >= outage.from)
      .map((e) => Date.parse(e.created_at as string)),
  );
  const pickupAt = Math.min(...during.map((l) => l.at));
  const waitingAtKill = pickupAt < Math.min(...arrivals);
  const firstPickup = pickupAt - (waitingAtKill ? outage.from : Math.min(...arrivals));
  const spread = HOSTS.map((h) => lines.filter((l) => l.host === h && l.rec.kind === 'run_end').length);
  t.diagnostic(`runs ${runs}; revisits ${revisits}, consumed twice: ${consumedTwice.length}; run_end per host a/b/c ${spread.join('/')}; host c down ${((outage.to - outage.from) / 1000).toFixed(1)} s, its first waiting work (${waitingAtKill ? 'waiting at the kill' : 'arriving after it'}) taken by another host after ${(firstPickup / 1000).toFixed(1)} s; adopted while down: ${during.length} run(s)`);
  assert.deepEqual(consumedTwice, [], 'no revisit consumed twice');
});
