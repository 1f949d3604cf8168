/**
 * Temp homes for tests: a real folder under the OS temp dir with the
 * repository's bundled agents and environments copied in, removed after the test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { Home } from '../../src/core/foundation/home.js';

export const REPO = path.resolve(import.meta.dirname, '..', '..');

export interface TempHome {
  root: string;
  home: Home;
  write(rel: string, text: string): string;
}

/** The agents and environments the package ships (agents/<id>/, environments/<id>.yaml). */
export const BUNDLED_AGENTS = ['claude', 'demo'];
export const BUNDLED_ENVIRONMENTS = ['local'];

const users = new WeakMap<TestContext, Array<() => unknown>>();

/** Runs `stop` (a daemon's, a watcher's) at the end of test `t`, before its temp homes are removed. */
export function beforeHomeRemoved(t: TestContext, stop: () => unknown): void {
  const list = users.get(t) ?? [];
  list.push(stop);
  users.set(t, list);
}

export function tempHome(t: TestContext | null, opts: { bundled?: boolean } = {}): TempHome {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-test-'));
  if (opts.bundled !== false) {
    // Only what the package ships, not whatever else a developer keeps in this repository's home.
    for (const a of BUNDLED_AGENTS) fs.cpSync(path.join(REPO, 'agents', a), path.join(root, 'agents', a), { recursive: true });
    for (const e of BUNDLED_ENVIRONMENTS) fs.cpSync(path.join(REPO, 'environments', `${e}.yaml`), path.join(root, 'environments', `${e}.yaml`));
  }
  fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
  t?.after(async () => {
    // Whatever watches the home is stopped before the folder goes: a watcher that sees its folders
    // removed re-watches their parents, and one close() racing that can leave a watch (and the
    // test process) running.
    for (const stop of (users.get(t) ?? []).reverse()) await stop();
    users.delete(t);
    fs.rmSync(root, { recursive: true, force: true });
  });
  return {
    root,
    home: new Home(root),
    write(rel, text) {
      const p = path.join(root, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, text);
      return p;
    },
  };
}

/**
 * Resolves when `file` exists and, if `ready` is given, when its text passes
 * `ready` (existence alone races a writer that has created but not yet written
 * it). Driven by fs.watch on its folder, not by polling.
 */
export function whenExists(file: string, ready: (text: string) => boolean = () => true): Promise<void> {
  return new Promise((resolve) => {
    const dir = path.dirname(file);
    fs.mkdirSync(dir, { recursive: true });
    const done = () => {
      try {
        return ready(fs.readFileSync(file, 'utf8'));
      } catch {
        return false;
      }
    };
    const w = fs.watch(dir, () => {
      if (done()) {
        w.close();
        resolve();
      }
    });
    if (done()) {
      w.close();
      resolve();
    }
  });
}
