/**
 * The run key: what makes a run's opening record provably the runtime's.
 *
 * Anyone who can append to events.jsonl can write a line that looks like a
 * run (`session.status_running` with a well-formed, newer run id). Checking
 * the form is not provenance: a made-up `wrun_fff…f` would open a "run" no
 * later run id can follow, and a run copied from another session's log would
 * bring that session's words along. So each session has a secret key, made
 * with the session (`sessions/<id>/run-key`, mode 0600, never mounted in the
 * sandbox), and the runtime stamps every opening record with
 * `proof = HMAC-SHA256(key, "<session id>\n<run id>")`. The fold accepts a
 * run only with a proof that checks out for this session and run id.
 *
 * The key travels with the session folder (copy a session, and its history
 * stays proven). A session made before keys existed gets one on first use,
 * recording how many lines a fold had judged before then (session.json's
 * cursor; none without one): runs on those lines are taken as they were (they
 * could not carry a proof); every later one needs it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';

export const RUN_KEY_FILE = 'run-key';

const RunKeyFile = z.object({
  format: z.literal(1),
  /** 32 random bytes, hex. */
  key: z.string().regex(/^[0-9a-f]{64}$/),
  /** Lines of events.jsonl when the key was made for an existing log; 0 for a new session. */
  legacy_through_line: z.number().int().nonnegative(),
});

export interface RunKey {
  key: Buffer;
  legacyThroughLine: number;
}

/** Writes a fresh key file into a session folder being made (no log lines before it). */
export function writeNewRunKey(sessionDir: string): void {
  writeSynced(path.join(sessionDir, RUN_KEY_FILE), `${JSON.stringify({ format: 1, key: crypto.randomBytes(32).toString('hex'), legacy_through_line: 0 })}\n`);
}

/** Creates `file` (it must not exist) with `text`, on disk before it returns: a key lost to a power cut would unprove every run. */
function writeSynced(file: string, text: string): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The session's key, made if missing (a session from before keys, or one
 * whose key was deleted: its existing lines are then taken as they are).
 * Two processes making it at once agree on one: it is written to a temp file
 * and linked into place, which fails if another got there first.
 */
export function loadRunKey(sessionDir: string, trustedLines: number): RunKey {
  const file = path.join(sessionDir, RUN_KEY_FILE);
  const read = (): RunKey | null => {
    try {
      const r = RunKeyFile.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      return r.success ? { key: Buffer.from(r.data.key, 'hex'), legacyThroughLine: r.data.legacy_through_line } : null;
    } catch {
      return null;
    }
  };
  const have = read();
  if (have) return have;
  const tmp = path.join(sessionDir, `.${RUN_KEY_FILE}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  // Only lines a fold had already judged (session.json's cursor) are taken as they were: counting the
  // file now would also bless whatever was appended since, a forged run included.
  writeSynced(tmp, `${JSON.stringify({ format: 1, key: crypto.randomBytes(32).toString('hex'), legacy_through_line: trustedLines })}\n`);
  try {
    fs.linkSync(tmp, file);
    const dir = fs.openSync(sessionDir, 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  const made = read();
  if (!made) throw new Error(`${file} is not a valid run key file; remove it to make a new one`);
  return made;
}

/** The proof a run's opening record carries. */
export function runProof(k: RunKey, sessionId: string, runId: string): string {
  return crypto.createHmac('sha256', k.key).update(`${sessionId}\n${runId}`).digest('hex').slice(0, 32);
}

/** Whether an opening record at `line` is the runtime's: a matching proof, or a line from before the key. */
export function proofHolds(k: RunKey, sessionId: string, runId: string, proof: string | undefined, line: number): boolean {
  // A line from before the key: taken as it was, unless its run id claims a time more than a day ahead.
  if (line <= k.legacyThroughLine) return runIdMs(runId) <= Date.now() + 86_400_000;
  if (typeof proof !== 'string' || !/^[0-9a-f]{32}$/.test(proof)) return false;
  return crypto.timingSafeEqual(Buffer.from(proof, 'hex'), Buffer.from(runProof(k, sessionId, runId), 'hex'));
}

/** The Unix milliseconds a run id carries (the first 48 bits of its UUIDv7). */
function runIdMs(runId: string): number {
  return parseInt(runId.slice(5, 17), 16);
}

/** The run keys a process has loaded, by session: at most 4,096, the oldest dropped first. */
export class RunKeyCache {
  private readonly keys = new Map<string, RunKey>();

  get(sessionId: string, load: () => RunKey): RunKey {
    let k = this.keys.get(sessionId);
    if (!k) {
      k = load();
      this.keys.set(sessionId, k);
      if (this.keys.size > 4096) this.keys.delete(this.keys.keys().next().value as string);
    }
    return k;
  }
}
