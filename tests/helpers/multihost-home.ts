/**
 * What the tests over sshfs (tests/multihost/) share: the home they write on
 * the file server's disk, children that must not outlive the test, and the
 * JSON lines a daemon prints.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { TestContext } from 'node:test';
import YAML from 'yaml';
import { Home } from '../../src/core/foundation/home.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import type { SshfsHome } from './sshfs-home.js';

/**
 * Writes a home at `root`: environments/local.yaml and the agent `mh`, of
 * the scripted provider, playing `script` (script.yaml's contents). Returns
 * a store on it, as this host sees it (not shared: the test writes from the
 * file server's side).
 */
export function writeMultihostHome(root: string, script: unknown): SessionStore {
  fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
  fs.mkdirSync(path.join(root, 'environments'), { recursive: true });
  fs.writeFileSync(path.join(root, 'environments', 'local.yaml'), YAML.stringify({ sandbox: 'auto', network: 'none' }));
  fs.mkdirSync(path.join(root, 'agents', 'mh'), { recursive: true });
  fs.writeFileSync(path.join(root, 'agents', 'mh', 'agent.yaml'), YAML.stringify({ provider: 'scripted', model: 'scripted', system: 'You answer.', environment: 'local', script: 'script.yaml' }));
  fs.writeFileSync(path.join(root, 'agents', 'mh', 'script.yaml'), YAML.stringify(script));
  return new SessionStore(new Home(root), systemDeps(process.env), { shared: false });
}

/**
 * The test's child processes: each is killed (SIGKILL) when the test ends,
 * and even if this process is ended before t.after runs (unshare ignores
 * SIGTERM, and a daemon left behind would keep the mounts busy); then
 * `beforeUnmount` runs and the mounts go.
 */
export function reapedChildren(t: TestContext, nfs: SshfsHome, beforeUnmount?: () => void): Set<ChildProcess> {
  const children = new Set<ChildProcess>();
  const reap = () => children.forEach((c) => c.kill('SIGKILL'));
  process.once('exit', reap);
  t.after(async () => {
    reap();
    process.off('exit', reap);
    await new Promise((r) => setTimeout(r, 300));
    beforeUnmount?.();
    await nfs.close();
  });
  return children;
}

/** Calls `onLine` with every line of `stream` that is a JSON object; other lines are skipped. */
export function onJsonLines(stream: Readable, onLine: (rec: Record<string, unknown>) => void): void {
  let buf = '';
  stream.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(l) as Record<string, unknown>;
      } catch {
        continue; // not a JSON line
      }
      onLine(rec);
    }
  });
}
