/**
 * Part 2, concurrent writers. While a real daemon runs (and is killed with
 * SIGKILL a few times), eight `openboa send` processes and eight inbox writer
 * processes (bench/chaos/inbox-writer.ts) write tagged messages, a mix of
 * small ones and ~1 MB ones, into a few sessions. Afterwards every tag must be
 * in events.jsonl exactly once, as a valid user.message whose text is exactly
 * what was written, in the session it was written to, and taken in by a run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { CLI, cli, createSession, percentile, readLog, REPO, rng, round, sessionDir, settle, sleep, startDaemon, startReady, tempHome, textOf, writeFile, type DaemonProc } from './common.js';
import { bigChars, messageText, parseMessage, sizeFor } from './inbox-writer.js';

export interface WritersOptions {
  seed: number;
  sendProcs: number;
  inboxWriters: number;
  messagesPerWriter: number;
  bigShare: number;
  bigBytes: number;
  sessions: number;
  kills: number;
  settleTimeoutS: number;
  keep: boolean;
}

interface Expected {
  tag: string;
  session: string;
  via: 'send' | 'inbox';
  chars: number;
  failed?: string;
  ms?: number;
}

/** Whether the built runtime (the one under test) knows the inbox (sessions/<id>/inbox/). */
export function inboxSupported(): boolean {
  const core = path.resolve(CLI, '..', '..', 'core');
  const walk = (d: string): boolean =>
    fs.readdirSync(d, { withFileTypes: true }).some((e) => {
      const p = path.join(d, e.name);
      if (e.isDirectory()) return walk(p);
      return e.name.endsWith('.js') && /\binbox\b/.test(fs.readFileSync(p, 'utf8'));
    });
  return fs.existsSync(core) && walk(core);
}

const inboxOf = (home: string, id: string) => path.join(sessionDir(home, id), 'inbox');

/**
 * Files in a session's inbox that the runtime still has to take: names not
 * starting with "." and anything left in inbox/.taking/ (a move cut short).
 */
function inboxLeft(home: string, id: string): string[] {
  const list = (d: string) => {
    try {
      return fs.readdirSync(d);
    } catch {
      return [];
    }
  };
  return [...list(inboxOf(home, id)).filter((n) => !n.startsWith('.')), ...list(path.join(inboxOf(home, id), '.taking')).map((n) => `.taking/${n}`)];
}

/** Files the runtime set aside as unreadable (`.refused-<name>`). */
function inboxRefused(home: string, id: string): string[] {
  try {
    return fs.readdirSync(inboxOf(home, id)).filter((n) => n.startsWith('.refused-'));
  } catch {
    return [];
  }
}

export async function writers(o: WritersOptions) {
  const t0 = Date.now();
  const r = rng(o.seed * 31 + 7);
  const home = tempHome('writers');
  writeFile(home, 'agents/fast/agent.yaml', 'description: answers at once\nprovider: scripted\nmodel: none\nscript: script.yaml\n');
  writeFile(home, 'agents/fast/script.yaml', 'turns:\n  - text: ok\nfallback: ok\n');
  const ids: string[] = [];
  for (let i = 0; i < o.sessions; i++) ids.push(await createSession(home, 'fast'));
  const withInbox = inboxSupported();
  const expected: Expected[] = [];

  // ---------------------------------------------------------------- the daemon, killed now and then
  const refusals: Array<{ code: number | null; stderr: string }> = [];
  const crashes: Array<{ code: number | null; stderr: string }> = [];
  let daemon: DaemonProc = await startReady(home, {}, [], refusals);
  let writing = true;
  let kills = 0;
  const killer = (async () => {
    while (writing && kills < o.kills) {
      await Promise.race([sleep(r.int(300, 1500)), daemon.exited]);
      if (!writing) break;
      if (daemon.child.exitCode !== null) (daemon.child.exitCode === 4 ? refusals : crashes).push({ code: daemon.child.exitCode, stderr: daemon.stderr().slice(0, 500) });
      await daemon.kill9();
      kills += 1;
      await sleep(r.int(0, 200));
      daemon = startDaemon(home, {});
    }
  })();

  // ---------------------------------------------------------------- openboa send x N, each sending its messages one after another
  const tWrite = Date.now();
  const senders = Array.from({ length: o.sendProcs }, async (_, p) => {
    const pr = rng(o.seed * 1000 + p);
    for (let j = 1; j <= o.messagesPerWriter; j++) {
      const tag = `ws-${String(p).padStart(2, '0')}-${String(j).padStart(4, '0')}`;
      const session = pr.pick(ids);
      const chars = sizeFor(pr, o.bigShare, o.bigBytes);
      const e: Expected = { tag, session, via: 'send', chars };
      expected.push(e);
      // `-`: the text comes on stdin (a 1 MB argument would exceed Linux's 128 KiB limit per argument).
      const res = await cli(home, ['send', session, '-'], messageText(tag, chars));
      e.ms = res.ms;
      if (res.code !== 0) e.failed = `exit ${res.code}: ${res.stderr.trim().slice(0, 300)}`;
    }
  });

  // ---------------------------------------------------------------- inbox writers x N, separate processes
  const inboxes = ids.map((id) => inboxOf(home, id));
  const writerProcs = !withInbox
    ? []
    : Array.from(
        { length: o.inboxWriters },
        (_, w) =>
          new Promise<void>((resolve, reject) => {
            const prefix = `wi-${String(w).padStart(2, '0')}`;
            const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'inbox-writer.ts'), inboxes.join(','), prefix, String(o.messagesPerWriter), String(o.bigShare), String(o.bigBytes), String(o.seed * 2000 + w)], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            let err = '';
            child.stdout.on('data', (d) => (out += d));
            child.stderr.on('data', (d) => (err += d));
            child.on('close', (code) => {
              if (code !== 0) return reject(new Error(`inbox writer ${w} exited ${code}: ${err.slice(0, 500)}`));
              const written = JSON.parse(out.trim()) as Array<{ tag: string; inbox: string; chars: number }>;
              for (const x of written) expected.push({ tag: x.tag, session: ids[inboxes.indexOf(x.inbox)] as string, via: 'inbox', chars: x.chars });
              resolve();
            });
          }),
      );

  await Promise.all([...senders, ...writerProcs]);
  const writeMs = Date.now() - tWrite;
  writing = false;
  await killer;

  // ---------------------------------------------------------------- settle: idle, nothing pending, every inbox empty
  // The last daemon of the kill loop may have been refused or not be ready yet: make sure one runs.
  const ready = await Promise.race([daemon.line((l) => l.kind === 'daemon_started', 60_000).then(() => true), daemon.exited.then(() => false)]).catch(() => false);
  if (!ready) {
    if (daemon.child.exitCode !== null) (daemon.child.exitCode === 4 ? refusals : crashes).push({ code: daemon.child.exitCode, stderr: daemon.stderr().slice(0, 500) });
    await daemon.kill9();
    daemon = await startReady(home, {}, [], refusals);
  }
  const settled = await settle(home, o.settleTimeoutS * 1000, () => ids.every((id) => inboxLeft(home, id).length === 0));
  const stop = await daemon.term();

  // ---------------------------------------------------------------- check the files
  const found = new Map<string, Array<{ session: string; line: number; exact: boolean; takenIn: boolean }>>();
  let corruptLines = 0;
  let invalidEvents = 0;
  let bytes = 0;
  for (const id of ids) {
    const log = readLog(path.join(sessionDir(home, id), 'events.jsonl'));
    corruptLines += log.bad;
    bytes += log.bytes;
    const processed = new Set<string>();
    for (const l of log.events) if (l.event.type === 'session.status_running') for (const p of (l.event.processed_event_ids as string[] | undefined) ?? []) processed.add(p);
    for (const l of log.events) {
      if (l.event.type === 'session.error' && (l.event.error as { code?: string } | undefined)?.code === 'invalid_event') invalidEvents += 1;
      if (l.event.type !== 'user.message') continue;
      const text = textOf(l.event.content);
      const m = parseMessage(text);
      if (!m) {
        corruptLines += 1; // every user.message here is ours: one we cannot read was damaged
        continue;
      }
      const exact = text === messageText(m.tag, m.size);
      found.set(m.tag, [...(found.get(m.tag) ?? []), { session: id, line: l.line, exact, takenIn: processed.has(l.id) }]);
    }
  }
  const bad = { lost: [] as string[], duplicated: [] as string[], corrupted: [] as string[], wrongSession: [] as string[], notTakenIn: [] as string[] };
  for (const e of expected.filter((x) => !x.failed)) {
    const hits = found.get(e.tag) ?? [];
    if (hits.length === 0) bad.lost.push(`${e.tag} (${e.via})`);
    if (hits.length > 1) bad.duplicated.push(`${e.tag} (${e.via}) x${hits.length}`);
    for (const h of hits) {
      if (!h.exact) bad.corrupted.push(`${e.tag} line ${h.line}`);
      if (h.session !== e.session) bad.wrongSession.push(`${e.tag} in ${h.session}, written to ${e.session}`);
      if (!h.takenIn) bad.notTakenIn.push(`${e.tag} line ${h.line}`);
    }
  }
  const strays = [...found.keys()].filter((t) => !expected.some((e) => e.tag === t));
  const leftovers = ids.flatMap((id) => inboxLeft(home, id).map((f) => `${id}/inbox/${f}`));
  const refused = ids.flatMap((id) => inboxRefused(home, id).map((f) => `${id}/inbox/${f}`));
  let stamped = 0;
  for (const id of ids) for (const l of readLog(path.join(sessionDir(home, id), 'events.jsonl')).events) if (typeof l.event.inbox === 'string') stamped += 1;
  const sendMs = expected.filter((e) => e.via === 'send' && e.ms !== undefined);
  const big = bigChars(o.bigBytes);

  const result = {
    part: 'concurrent writers',
    options: o,
    note: withInbox ? null : 'the built runtime has no inbox yet (nothing in dist/core mentions it): only the `openboa send` half ran; the inbox half could not be verified',
    figures: {
      sessions: ids.length,
      send_processes: o.sendProcs,
      inbox_writers: withInbox ? o.inboxWriters : 0,
      messages_sent_by_send: expected.filter((e) => e.via === 'send').length,
      messages_written_to_inbox: expected.filter((e) => e.via === 'inbox').length,
      big_message_chars: big,
      big_messages_by_send: expected.filter((e) => e.via === 'send' && e.chars === big).length,
      big_messages_to_inbox: expected.filter((e) => e.via === 'inbox' && e.chars === big).length,
      daemon_kills: kills,
      events_jsonl_mb: round(bytes / 2 ** 20),
      send_ms: { p50: percentile(sendMs.map((e) => e.ms as number), 50), p99: percentile(sendMs.map((e) => e.ms as number), 99) },
      events_stamped_from_inbox: stamped,
      stray_tags: strays.length,
    },
    invariants: {
      /** A tag written (send exited 0, or its inbox file was renamed in) that is not in events.jsonl. */
      lost: bad.lost.length,
      /** A tag that is in events.jsonl more than once. */
      duplicated: bad.duplicated.length,
      /** A user.message whose text is not exactly what was written, or a line that is not a JSON object, or an invalid_event error. */
      corrupted: bad.corrupted.length + corruptLines + invalidEvents,
      /** A tag that landed in another session's log. */
      wrong_session: bad.wrongSession.length,
      /** A tag in the log that no session.status_running ever took in. */
      not_taken_in: bad.notTakenIn.length,
      /** Inbox files the runtime never took, or left half-moved in .taking/ (after the settle). */
      inbox_files_left: leftovers.length,
      /** Inbox files the runtime refused (set aside as .refused-<name>): ours are all valid. */
      inbox_files_refused: refused.length,
      /** `openboa send` exiting non-zero. */
      sends_failed: expected.filter((e) => e.failed).length,
      /** Sessions not idle with nothing pending within the settle timeout. */
      not_settled: settled.settled ? 0 : 1,
      unclean_final_stop: stop.code === 0 ? 0 : 1,
      /** The daemon exiting without our SIGKILL (other than a refused start). */
      daemon_crashes: crashes.length,
      /** A daemon start refused with exit 4, "another daemon is already running", when none was. */
      daemon_starts_refused: refusals.length,
    },
    durations_s: { writing: round(writeMs / 1000), settle: round(settled.ms / 1000), total: round((Date.now() - t0) / 1000) },
    examples: {
      lost: bad.lost.slice(0, 5),
      duplicated: bad.duplicated.slice(0, 5),
      corrupted: bad.corrupted.slice(0, 5),
      wrong_session: bad.wrongSession.slice(0, 5),
      not_taken_in: bad.notTakenIn.slice(0, 5),
      inbox_files_left: leftovers.slice(0, 5),
      inbox_files_refused: refused.slice(0, 5),
      sends_failed: expected.filter((e) => e.failed).slice(0, 3).map((e) => `${e.tag}: ${e.failed}`),
      crashes: crashes.slice(0, 2),
      refusals: refusals.slice(0, 2),
    },
    home: null as string | null,
  };
  if (!o.keep && Object.values(result.invariants).every((v) => v === 0)) fs.rmSync(home, { recursive: true, force: true });
  else result.home = home;
  return result;
}
