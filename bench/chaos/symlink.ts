/**
 * Part 3, the symlink race. A session's workspace holds a directory `d`
 * (with secret.txt saying "inside") and a symlink `L` to a host directory
 * outside the home (with secret.txt holding a unique secret). A separate
 * process swaps the two names in a tight loop: renameat2(RENAME_EXCHANGE)
 * through python3's ctypes where it works, else four plain renames. Meanwhile
 * the scripted model makes the real daemon call the file tools `read
 * /workspace/d/secret.txt` and `write /workspace/d/w-<i>.txt`, `ops` times
 * in all. No read may return the secret, and no write may land outside.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createSession, readLog, round, sessionDir, settle, sleep, startReady, tempHome, textOf, writeFile } from './common.js';
import { startModelServer, type Reply, type RequestBody } from './model-server.js';

export interface SymlinkOptions {
  seed: number;
  ops: number;
  opsPerReply: number;
  settleTimeoutS: number;
  keep: boolean;
}

/** The racer: swaps `d` and `L` in the given folder until SIGTERM, then prints how many swaps it made. */
const RACER = String.raw`
import ctypes, os, signal, sys
os.chdir(sys.argv[1])
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
mode = 'renameat2'
try:
    libc = ctypes.CDLL(None, use_errno=True)
    exchange = libc.renameat2
    exchange.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if exchange(AT_FDCWD, b'd', AT_FDCWD, b'L', RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), 'renameat2')
except (AttributeError, OSError):
    mode = 'rename'
print(mode, flush=True)
n = 0
while not stop:
    if mode == 'renameat2':
        exchange(AT_FDCWD, b'd', AT_FDCWD, b'L', RENAME_EXCHANGE)
    else:
        try:
            os.rename('d', 't'); os.rename('L', 'd'); os.rename('d', 'L'); os.rename('t', 'd')
        except OSError:
            pass
    n += 1
print(n, flush=True)
`;

const BATCH_RE = /\brace-batch-\d+\b/g;

export async function symlinkRace(o: SymlinkOptions) {
  const t0 = Date.now();
  const secret = `SECRET-${randomBytes(12).toString('hex')}`;
  const inside = `inside-${randomBytes(6).toString('hex')}`;
  const batches = Math.ceil(o.ops / o.opsPerReply);
  let op = 0;

  // ---------------------------------------------------------------- the scripted model: each batch message gets N file-tool calls, then a text
  const answered = new Set<string>();
  const decide = (body: RequestBody): Reply => {
    // Walk the conversation in order: a batch is asked in a user text, its calls are issued by
    // any tool use after it, and it is done when an assistant text quotes it.
    const asked: string[] = [];
    const issued = new Set<string>();
    const done = new Set<string>();
    for (const m of body.messages ?? []) {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
      for (const b of blocks) {
        const tags = b.type === 'text' ? (String(b.text ?? '').match(BATCH_RE) ?? []) : [];
        if (m.role === 'user') asked.push(...tags);
        else if (b.type === 'tool_use') asked.forEach((t) => issued.add(t));
        else tags.forEach((t) => done.add(t));
      }
    }
    const pending = [...new Set(asked)].filter((b) => !done.has(b));
    if (pending.some((b) => !issued.has(b)) && op < o.ops) {
      const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
      for (let i = 0; i < o.opsPerReply && op < o.ops; i++, op++) {
        // Every call's input differs (a run stops a call repeated 5 times with the same input).
        if (op % 2 === 0) calls.push({ name: 'read', input: { file_path: '/workspace/d/secret.txt', view_range: [1, 1000 + op] } });
        else calls.push({ name: 'write', input: { file_path: `/workspace/d/w-${op}.txt`, content: `write ${op}` } });
      }
      return { toolUses: calls };
    }
    return { text: pending.length ? `done ${pending.join(' ')}` : 'nothing to do', onDone: () => pending.forEach((b) => answered.add(b)) };
  };
  const server = await startModelServer(decide);

  // ---------------------------------------------------------------- the home, the workspace, the outside
  const home = tempHome('symlink');
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-chaos-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.txt'), `${secret}\n`);
  writeFile(home, 'agents/racer/agent.yaml', ['description: calls the file tools while a racer swaps a directory and a symlink', 'provider: anthropic', 'model: chaos-model', 'environment: local', 'limits:', '  max_model_requests_per_wake: 1000', ''].join('\n'));
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'chaos-not-a-key', ANTHROPIC_AUTH_TOKEN: undefined };
  const id = await createSession(home, 'racer');
  const ws = path.join(sessionDir(home, id), 'workspace');
  fs.mkdirSync(path.join(ws, 'd'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'd', 'secret.txt'), `${inside}\n`);
  fs.symlinkSync(outside, path.join(ws, 'L'));

  const daemon = await startReady(home, env, [], []);

  // ---------------------------------------------------------------- the racer, a separate process
  const racer = spawn('python3', ['-c', RACER, ws], { stdio: ['ignore', 'pipe', 'pipe'] });
  let racerOut = '';
  racer.stdout.on('data', (d) => (racerOut += d));
  const racerExit = new Promise<void>((resolve) => racer.on('close', () => resolve()));
  for (let i = 0; i < 100 && !racerOut.includes('\n'); i++) await sleep(50);
  const racerMode = racerOut.split('\n')[0] || 'did not start';

  // ---------------------------------------------------------------- the driver: one batch message at a time
  const tRace = Date.now();
  const events = path.join(sessionDir(home, id), 'events.jsonl');
  for (let b = 1; b <= batches; b++) {
    const tag = `race-batch-${b}`;
    fs.appendFileSync(events, `${JSON.stringify({ type: 'user.message', content: `please run ${tag}` })}\n`);
    for (let w = 0; w < 600 && !answered.has(tag); w++) await sleep(50);
  }
  const raceMs = Date.now() - tRace;
  racer.kill('SIGTERM');
  await racerExit;
  const swaps = Number(racerOut.split('\n')[1] ?? 0);
  const settled = await settle(home, o.settleTimeoutS * 1000);
  await daemon.term();
  await server.close();

  // ---------------------------------------------------------------- count
  const log = readLog(events);
  const uses = new Map<string, { name: string; input: Record<string, unknown> }>();
  for (const l of log.events) if (l.event.type === 'agent.tool_use') uses.set(l.id, { name: String(l.event.name), input: (l.event.input ?? {}) as Record<string, unknown> });
  const c = { reads: 0, readsSecret: 0, readsInside: 0, readsRefused: 0, readsOther: 0, writes: 0, writesOk: 0, writesRefused: 0 };
  const otherReads: string[] = [];
  const refusals = new Map<string, number>();
  for (const l of log.events) {
    if (l.event.type !== 'agent.tool_result') continue;
    const use = uses.get(String(l.event.tool_use_id));
    if (!use) continue;
    const text = textOf(l.event.content);
    const isError = l.event.is_error === true;
    if (isError) {
      const why = text.replace(/\/workspace\/\S+/g, '<path>').replace(/w-\d+/g, 'w-N').slice(0, 90);
      refusals.set(`${use.name}: ${why}`, (refusals.get(`${use.name}: ${why}`) ?? 0) + 1);
    }
    if (use.name === 'read') {
      c.reads += 1;
      if (text.includes(secret)) c.readsSecret += 1;
      else if (isError) c.readsRefused += 1;
      else if (text.includes(inside)) c.readsInside += 1;
      else {
        c.readsOther += 1;
        otherReads.push(text.slice(0, 120));
      }
    } else if (use.name === 'write') {
      c.writes += 1;
      if (isError) c.writesRefused += 1;
      else c.writesOk += 1;
    }
  }
  // Writes that landed outside: any file there but the secret, or the secret changed.
  const outsideFiles = fs.readdirSync(outside).filter((n) => n !== 'secret.txt');
  const secretChanged = fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8') !== `${secret}\n` ? 1 : 0;
  // Where the workspace directory is now (the racer may have left it under either name).
  const realDir = ['d', 'L'].map((n) => path.join(ws, n)).find((p) => fs.lstatSync(p, { throwIfNoEntry: false })?.isDirectory()) ?? null;
  const landedInside = realDir ? fs.readdirSync(realDir).filter((n) => n.startsWith('w-')).length : 0;
  // The secret anywhere under the home (logs, runtime files, saved tool output).
  const secretFiles: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p, 'latin1').includes(secret)) secretFiles.push(path.relative(home, p));
    }
  };
  walk(home);

  const result = {
    part: 'symlink race',
    options: o,
    note: racerMode === 'renameat2' ? null : `the racer used ${racerMode} (not renameat2 RENAME_EXCHANGE)`,
    figures: {
      racer: racerMode,
      racer_swaps: swaps,
      swaps_per_second: raceMs > 0 ? Math.round(swaps / (raceMs / 1000)) : null,
      reads: c.reads,
      reads_inside: c.readsInside,
      reads_refused: c.readsRefused,
      reads_other: c.readsOther,
      writes: c.writes,
      writes_ok: c.writesOk,
      writes_refused: c.writesRefused,
      writes_landed_inside: landedInside,
      refusals_by_message: Object.fromEntries([...refusals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6)),
    },
    invariants: {
      /** A read that returned the outside file's secret. */
      reads_returning_secret: c.readsSecret,
      /** A file written into the outside directory, or the outside secret overwritten. */
      writes_landing_outside: outsideFiles.length + secretChanged,
      /** The secret in any file under the home (a leak by another way). */
      files_holding_secret: secretFiles.length,
      /** Fewer tool calls than asked for: the race was not run in full. */
      tool_calls_missing: Math.max(0, o.ops - c.reads - c.writes),
      /** The racer must really race: both states seen (reads inside and reads refused). */
      race_not_exercised: c.readsInside > 0 && c.readsRefused > 0 && swaps > 0 ? 0 : 1,
      not_settled: settled.settled ? 0 : 1,
    },
    durations_s: { race: round(raceMs / 1000), total: round((Date.now() - t0) / 1000) },
    examples: { other_reads: otherReads.slice(0, 3), outside_files: outsideFiles.slice(0, 5), secret_files: secretFiles.slice(0, 5) },
    home: null as string | null,
  };
  if (!o.keep && Object.values(result.invariants).every((v) => v === 0)) {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  } else result.home = home;
  return result;
}
