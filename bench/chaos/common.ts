/**
 * Shared pieces of the chaos benchmark: options, a seeded random source, the
 * built CLI as a child process, a temp home, the daemon as a child process
 * that can be killed with SIGKILL, and a reader for events.jsonl that keeps
 * line numbers (hand-written lines get the id `sevt_line_<N>`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
/** The built CLI; CHAOS_CLI points the benchmark at another build (e.g. an older commit's, to see it fail). */
export let CLI = process.env.CHAOS_CLI ? path.resolve(process.env.CHAOS_CLI) : path.join(REPO, 'dist', 'cli', 'main.js');

/**
 * Runs the benchmark on a private copy of dist/ (with package.json and a link
 * to node_modules), so that a rebuild of dist/ by someone else mid-run cannot
 * change, or half-change, the program under test. Returns the cleanup.
 */
export async function pinBuild(): Promise<() => void> {
  if (process.env.CHAOS_CLI) return () => {};
  for (let attempt = 1; ; attempt++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-chaos-build-'));
    fs.cpSync(path.join(REPO, 'dist'), path.join(dir, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
    const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
    CLI = path.join(dir, 'dist', 'cli', 'main.js');
    // A copy taken while dist/ was being rewritten does not load: take another.
    const r = await cli(dir, ['--version']);
    if (r.code === 0) return cleanup;
    cleanup();
    if (attempt >= 5) throw new Error(`the build in dist/ does not run: ${r.stderr.slice(0, 500)}`);
    await sleep(5000);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** mulberry32: a small seeded generator, so the schedule of a run can be replayed with the same --seed. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [lo, hi]. */
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T,
  };
}
export type Rng = ReturnType<typeof rng>;

/**
 * Options come from `--name value` flags, else `CHAOS_NAME` environment
 * variables (dashes become underscores), else the defaults given here.
 */
export function options<T extends Record<string, number | string>>(defaults: T, argv = process.argv.slice(2)): T {
  const out: Record<string, number | string> = { ...defaults };
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else flags.set(a.slice(2), argv[i + 1] ?? '');
  }
  for (const k of flags.keys()) {
    if (!(k in defaults)) throw new Error(`unknown option --${k}; known: ${Object.keys(defaults).map((x) => `--${x}`).join(' ')}`);
  }
  for (const [k, def] of Object.entries(defaults)) {
    const raw = flags.get(k) ?? process.env[`CHAOS_${k.toUpperCase().replace(/-/g, '_')}`];
    if (raw === undefined) continue;
    if (typeof def === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`--${k} expects a number, got "${raw}"`);
      out[k] = n;
    } else out[k] = raw;
  }
  return out as T;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the built CLI the way a person would: `node dist/cli/main.js <args> --home <home>`. */
export function cli(home: string, args: string[], input?: string | Buffer, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const e = { ...process.env, ...env };
    delete e.OPENBOA_HOME;
    const child = spawn(process.execPath, [CLI, ...args, '--home', home], { env: e, cwd: home, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 }));
    child.stdin.on('error', () => {}); // the child may exit before reading everything
    child.stdin.end(input ?? '');
  });
}

/** A temp home with the repository's environments; agents are added by each part. */
export function tempHome(label: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `openboa-chaos-${label}-`));
  fs.cpSync(path.join(REPO, 'environments'), path.join(root, 'environments'), { recursive: true });
  fs.mkdirSync(path.join(root, 'sessions'));
  return root;
}

export function writeFile(root: string, rel: string, text: string) {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
}

export function sessionDir(root: string, id: string) {
  return path.join(root, 'sessions', id);
}

/** Creates a session through the CLI and returns its id. */
export async function createSession(root: string, agent: string): Promise<string> {
  const r = await cli(root, ['session', 'create', '--agent', agent, '--json']);
  if (r.code !== 0) throw new Error(`session create failed (${r.code}): ${r.stderr}`);
  const id = (JSON.parse(r.stdout.trim().split('\n').pop() as string) as { id?: string }).id;
  if (!id) throw new Error(`session create printed no id: ${r.stdout}`);
  return id;
}

export type DaemonLine = Record<string, unknown> & { kind?: string; received_ms: number };

export interface DaemonProc {
  child: ChildProcess;
  pid: number;
  spawnedMs: number;
  lines: DaemonLine[];
  stderr(): string;
  /** Resolves with the first line (past or future) that matches; rejects after `ms`. */
  line(pred: (l: DaemonLine) => boolean, ms?: number): Promise<DaemonLine>;
  /** Runs started and not yet ended, as this process printed them. */
  inFlight(): number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill9(): Promise<void>;
  term(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts a daemon and waits for its ready line. A start refused with exit 4
 * ("another daemon is already running", when none is: a killed daemon's lock
 * left behind) is counted in `refusals` and tried again each second, up to
 * `ms`.
 */
export async function startReady(home: string, env: NodeJS.ProcessEnv, args: string[], refusals: Array<{ code: number | null; stderr: string }>, ms = 60_000): Promise<DaemonProc> {
  const t0 = Date.now();
  for (;;) {
    const d = startDaemon(home, env, args);
    const r = await Promise.race([d.line((l) => l.kind === 'daemon_started', ms).then(() => 'ready' as const), d.exited.then(() => 'exited' as const)]).catch(() => 'timeout' as const);
    if (r === 'ready') return d;
    await d.kill9();
    if (d.child.exitCode !== 4 || Date.now() - t0 > ms) throw new Error(`the daemon did not start (${r}, exit ${d.child.exitCode}): ${d.stderr().slice(0, 800)}`);
    refusals.push({ code: d.child.exitCode, stderr: d.stderr().slice(0, 500) });
    await sleep(1000);
  }
}

/** `node dist/cli/main.js daemon --home <home> --json` as a child process. */
export function startDaemon(home: string, env: NodeJS.ProcessEnv, args: string[] = []): DaemonProc {
  const spawnedMs = Date.now();
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k]; // `undefined` removes a variable
  const child = spawn(process.execPath, [CLI, 'daemon', '--home', home, '--json', ...args], { env: full, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: DaemonLine[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  let err = '';
  let open = 0;
  child.stdout!.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      const raw = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let l: DaemonLine;
      try {
        l = { ...(JSON.parse(raw) as Record<string, unknown>), received_ms: Date.now() };
      } catch {
        l = { kind: 'text', text: raw, received_ms: Date.now() };
      }
      if (l.kind === 'run_start') open += 1;
      if (l.kind === 'run_end') open -= 1;
      lines.push(l);
      for (const w of [...waiters]) w();
    }
  });
  child.stderr!.on('data', (d) => {
    if (err.length < 20_000) err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    pid: child.pid as number,
    spawnedMs,
    lines,
    stderr: () => err,
    inFlight: () => open,
    line(pred, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching daemon line within ${ms} ms; stderr: ${err.slice(0, 800)}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    exited,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async term() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface LogLine {
  line: number;
  /** The event's id, or `sevt_line_<N>` for a hand-written line without one. */
  id: string;
  event: Record<string, unknown> & { type?: string };
}

/** Every line of events.jsonl that parses as a JSON object, with its 1-based line number. Unparseable lines are counted in `bad`. */
export function readLog(file: string): { events: LogLine[]; bad: number; bytes: number } {
  const text = fs.readFileSync(file, 'utf8');
  const events: LogLine[] = [];
  let bad = 0;
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  raw.forEach((l, i) => {
    if (l.trim() === '') return;
    try {
      const e = JSON.parse(l) as LogLine['event'];
      if (!e || typeof e !== 'object' || Array.isArray(e)) throw new Error('not an object');
      events.push({ line: i + 1, id: typeof e.id === 'string' ? e.id : `sevt_line_${i + 1}`, event: e });
    } catch {
      bad += 1;
    }
  });
  return { events, bad, bytes: Buffer.byteLength(text) };
}

/** The text of a `content` field: a string, or the text blocks joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '')).join('');
  return '';
}

export interface SessionRow {
  id: string;
  status?: string;
  pending_events?: number;
  requires_action?: number;
  error?: string;
}

/** `openboa sessions --json`: one row per session. */
export async function listSessions(home: string): Promise<SessionRow[]> {
  const r = await cli(home, ['sessions', '--json']);
  if (r.code !== 0) throw new Error(`openboa sessions failed (${r.code}): ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as SessionRow);
}

/**
 * Polls `openboa sessions --json` until every session is idle with nothing
 * pending and nothing waiting for a person (`extra`, if given, must hold too),
 * or until `timeoutMs`. Returns how long it took and the last rows.
 */
export async function settle(home: string, timeoutMs: number, extra: () => boolean = () => true): Promise<{ settled: boolean; ms: number; rows: SessionRow[] }> {
  const t0 = Date.now();
  let rows: SessionRow[] = [];
  for (;;) {
    rows = await listSessions(home);
    const quiet = rows.every((r) => r.status === 'idle' && r.pending_events === 0 && r.requires_action === 0 && !r.error);
    if (quiet && extra()) return { settled: true, ms: Date.now() - t0, rows };
    if (Date.now() - t0 > timeoutMs) return { settled: false, ms: Date.now() - t0, rows };
    await sleep(500);
  }
}

/**
 * Processes whose command line mentions `needle` (e.g. a sandbox left behind
 * by a killed daemon), with what /proc says about them: parent, pid in its
 * own namespace, state, what it waits in, its children, and its pty fds.
 */
export function processesMentioning(needle: string, exceptPids: number[] = []): Array<{ pid: number; cmd: string; ppid: string; nspid: string; state: string; wchan: string; children: string; ptys: number }> {
  const out: Array<{ pid: number; cmd: string; ppid: string; nspid: string; state: string; wchan: string; children: string; ptys: number }> = [];
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    if (pid === process.pid || exceptPids.includes(pid)) continue;
    const cmd = read(`/proc/${d}/cmdline`).split('\0').join(' ');
    if (!cmd.includes(needle)) continue;
    const status = read(`/proc/${d}/status`);
    const field = (k: string) => new RegExp(`^${k}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
    let ptys = 0;
    try {
      for (const fd of fs.readdirSync(`/proc/${d}/fd`)) if (/ptmx|pts/.test(fs.readlinkSync(`/proc/${d}/fd/${fd}`))) ptys += 1;
    } catch {
      // gone, or not ours to read
    }
    out.push({ pid, cmd: cmd.slice(0, 120), ppid: field('PPid'), nspid: field('NSpid'), state: field('State'), wchan: read(`/proc/${d}/wchan`), children: read(`/proc/${d}/task/${d}/children`).trim(), ptys });
  }
  return out;
}

export const round = (x: number, digits = 1) => Number(x.toFixed(digits));

export function percentile(xs: number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}
