/**
 * The files of one agent or environment definition, reached without
 * following a symlink: the YAML a person reads and edits, its history
 * journal (schema/definition-history.ts) and, while a change is being
 * committed, the new YAML beside it as `<yaml>.pending`.
 *
 *   agents/<id>/agent.yaml            agents/<id>/agent.history.jsonl
 *   environments/<id>.yaml            environments/<id>.history.jsonl
 *
 * An agent's folder is opened with O_NOFOLLOW | O_DIRECTORY and every file
 * in it through that descriptor with O_NOFOLLOW (beneath.ts's walk), so a
 * symlinked folder or file is refused in the same operation that uses it,
 * never by a check before it. `agents/` and `environments/` themselves are
 * the home's, as every command takes them.
 *
 * Crash safety: a change is (1) the new YAML written and fsynced to
 * `.pending`, (2) its history line appended in one write (fdatasync), (3)
 * `.pending` renamed over the YAML. `recoverPending` (under the definitions
 * lock) finishes (3) when the history names the pending content, and
 * removes a pending file that it does not name (a crash before (2): the
 * change did not happen). A torn last history line (a crash inside (2)) is
 * ignored by the reader and cut off before the next append.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { HistoryLine } from '../schema/index.js';
import type { Home } from '../foundation/home.js';
import { invalidInput } from '../foundation/errors.js';
import { DIR_FLAGS, READ_FLAGS, at, closeQuietly } from '../sandbox/beneath.js';

export type DefinitionKind = 'agent' | 'environment';

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A definition's files, through an open descriptor of the folder that holds them. Close it. */
export interface DefinitionFiles {
  readonly kind: DefinitionKind;
  readonly id: string;
  /** The YAML's path relative to the home, for messages. */
  readonly display: string;
  readonly dirFd: number;
  readonly yamlName: string;
  readonly historyName: string;
  readonly pendingName: string;
  close(): void;
}

/**
 * Opens a definition's folder. Null when it does not exist (an agent's
 * folder; the environments folder). A symlink or a non-folder is refused
 * with invalid_input naming it.
 */
export function openDefinition(home: Home, kind: DefinitionKind, id: string): DefinitionFiles | null {
  const dir = kind === 'agent' ? home.agentDir(id) : path.dirname(home.environmentFile(id));
  const yamlName = kind === 'agent' ? 'agent.yaml' : `${id}.yaml`;
  const display = kind === 'agent' ? `agents/${id}/agent.yaml` : `environments/${id}.yaml`;
  let dirFd: number;
  try {
    dirFd = fs.openSync(dir, kind === 'agent' ? DIR_FLAGS : fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw invalidInput(`${path.dirname(display)}: refused: a symlink or not a folder`);
    throw e;
  }
  const base = kind === 'agent' ? 'agent' : id;
  return {
    kind,
    id,
    display,
    dirFd,
    yamlName,
    historyName: `${base}.history.jsonl`,
    pendingName: `${yamlName}.pending`,
    close: () => closeQuietly(dirFd),
  };
}

/** A regular file's text through the folder's descriptor; null when absent; a symlink is refused. */
export function readFileAt(f: DefinitionFiles, name: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(at(f.dirFd, name), READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw invalidInput(`${siblingDisplay(f, name)}: refused: a symlink`);
    throw e;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw invalidInput(`${siblingDisplay(f, name)}: refused: not a regular file`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The history's complete lines; a torn last line (no "\n" yet) is left out, a bad line before it is an error. */
export function readHistory(f: DefinitionFiles): HistoryLine[] {
  const text = readFileAt(f, f.historyName);
  if (text === null) return [];
  const lines = text.split('\n');
  lines.pop(); // "" after the last "\n", or a torn last line
  return lines.map((l, i) => {
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch {
      value = undefined;
    }
    const r = HistoryLine.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw invalidInput(`${siblingDisplay(f, f.historyName)}:${i + 1}: ${value === undefined ? 'not JSON' : `${issue?.path.join('.') || '(line)'}: ${issue?.message}`}`);
    }
    return r.data;
  });
}

/** Appends one history line in one write, after cutting off a torn last line. Caller holds the definitions lock. */
export function appendHistory(f: DefinitionFiles, line: HistoryLine): void {
  const C = fs.constants;
  const fd = fs.openSync(at(f.dirFd, f.historyName), C.O_RDWR | C.O_APPEND | C.O_CREAT | C.O_NOFOLLOW | C.O_NOCTTY, 0o644);
  try {
    const size = fs.fstatSync(fd).size;
    if (size > 0) {
      const text = fs.readFileSync(fd, 'utf8');
      if (!text.endsWith('\n')) fs.ftruncateSync(fd, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1), 'utf8'));
    }
    fs.writeSync(fd, `${JSON.stringify(HistoryLine.parse(line))}\n`);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Step (1): the new YAML, fsynced, as `.pending` (replacing a leftover one). */
export function writePending(f: DefinitionFiles, text: string): void {
  const C = fs.constants;
  const p = at(f.dirFd, f.pendingName);
  fs.rmSync(p, { force: true });
  const fd = fs.openSync(p, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NOCTTY, 0o644);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Step (3): `.pending` renamed over the YAML, the folder fsynced. */
export function commitPending(f: DefinitionFiles): void {
  fs.renameSync(at(f.dirFd, f.pendingName), at(f.dirFd, f.yamlName));
  try {
    fs.fsyncSync(f.dirFd);
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic.
  }
}

/**
 * After a crash: finishes a change whose history line was written (the
 * pending content is what the last line names and the YAML is not), and
 * removes a pending file no line names. Caller holds the definitions lock.
 */
export function recoverPending(f: DefinitionFiles, history: readonly HistoryLine[]): void {
  const pending = readFileAt(f, f.pendingName);
  if (pending === null) return;
  const last = history.at(-1);
  const current = readFileAt(f, f.yamlName);
  if (last && last.sha256 === sha256(pending) && (current === null || sha256(current) !== last.sha256)) commitPending(f);
  else fs.rmSync(at(f.dirFd, f.pendingName), { force: true });
}

function siblingDisplay(f: DefinitionFiles, name: string): string {
  return `${path.posix.dirname(f.display)}/${name}`;
}
