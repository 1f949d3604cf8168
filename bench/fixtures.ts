/**
 * Homes for benchmarks: a scripted zero-latency agent, and many sessions
 * made quickly (one session through the real store, then copies of its
 * files with fresh ids and matching session.json cursors).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Home } from '../src/core/home.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { systemDeps } from '../src/core/deps.js';
import { uuidv7 } from '../src/core/ids.js';

export interface BenchHome {
  root: string;
  home: Home;
  store: SessionStore;
  cleanup(): void;
}

/** A temp home with the repository's environments and a `fast` scripted agent that answers with text at once. */
export function benchHome(): BenchHome {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-'));
  const repo = path.resolve(import.meta.dirname, '..');
  fs.cpSync(path.join(repo, 'environments'), path.join(root, 'environments'), { recursive: true });
  fs.mkdirSync(path.join(root, 'agents', 'fast'), { recursive: true });
  fs.writeFileSync(path.join(root, 'agents', 'fast', 'agent.yaml'), 'provider: scripted\nmodel: none\nscript: script.yaml\n');
  fs.writeFileSync(path.join(root, 'agents', 'fast', 'script.yaml'), 'turns:\n  - text: ok\nfallback: ok\n');
  fs.mkdirSync(path.join(root, 'sessions'));
  const home = new Home(root);
  return { root, home, store: new SessionStore(home, systemDeps()), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Makes `n` idle sessions of agent `fast`, fast: copies of one real session. Returns their ids. */
export function manySessions(b: BenchHome, n: number): string[] {
  if (n === 0) return [];
  const first = b.store.create({ agentId: 'fast', environmentId: 'local' });
  const tp = b.store.paths(first.id);
  const events = fs.readFileSync(tp.events, 'utf8');
  const snapshot = JSON.parse(fs.readFileSync(tp.snapshot, 'utf8'));
  const ids = [first.id];
  for (let i = 1; i < n; i++) {
    const id = uuidv7();
    const p = b.store.paths(id);
    fs.mkdirSync(p.workspace, { recursive: true });
    fs.mkdirSync(p.runtime);
    fs.writeFileSync(p.events, events);
    fs.writeFileSync(p.wakeQueue, '');
    const snap = structuredClone(snapshot);
    snap.id = id;
    snap.journals.events.ino = fs.statSync(p.events).ino;
    snap.journals.wake_queue.ino = fs.statSync(p.wakeQueue).ino;
    fs.writeFileSync(p.snapshot, JSON.stringify(snap));
    ids.push(id);
  }
  return ids;
}
