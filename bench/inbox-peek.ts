/**
 * What a look at a session's inbox/ costs a run (every second, on a shared
 * home: run/inbox-during-run.ts) and the daemon (session-holds.ts,
 * stray-pickup.ts) as the number of files waiting there grows: anyone who
 * can deliver to a session can make it grow. `has_files`: inboxHasFiles, the
 * yes/no a run asks every second; `signature`: inboxSignature, taken before
 * and after each run and kept for an inbox a drain left as it was (its
 * `signature_chars`). Files are the writer's (names as `openboa send` makes
 * them), none in .taking. Target: has_files flat in the number of files;
 * signature_chars bounded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { inboxHasFiles, inboxSignature } from '../src/core/store/inbox.js';
import { sessionPaths } from '../src/core/foundation/home.js';
import { median, round, timeSync } from './stats.js';

export function benchInboxPeek(sizes = [1, 1_000, 50_000]) {
  const rows = [];
  for (const n of sizes) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-inbox-'));
    try {
      const p = sessionPaths(dir);
      fs.mkdirSync(p.inbox, { recursive: true });
      for (let i = 0; i < n; i++) fs.writeFileSync(path.join(p.inbox, `${Date.now()}${String(i).padStart(6, '0')}-${randomUUID()}.json`), '');
      const runs = n > 10_000 ? 20 : 200;
      const has = timeSync(() => void inboxHasFiles(p), runs, 3);
      const sig = timeSync(() => void inboxSignature(p), runs, 3);
      rows.push({ files: n, has_files_ms: round(median(has)), signature_ms: round(median(sig)), signature_chars: inboxSignature(p)?.length ?? 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return { bench: 'inbox-peek', rows, target: 'has_files flat in the number of files; signature_chars bounded' };
}
