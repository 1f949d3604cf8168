/**
 * Issue 2: reading the new lines of a log costs time proportional to the new
 * bytes, not to the file. Reads the last 10 lines of a 100,000-line log and of
 * a 100-line log from a saved cursor (the daemon's hot path), and the same
 * through the store's snapshot refresh. Expect ratios near 1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendLines, readLines } from '../src/core/store/jsonl.js';
import { parseEventLine } from '../src/core/store/parse-line.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { Home } from '../src/core/foundation/home.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { median, percentile, round, timeSync } from './stats.js';
import { conversationLines } from './fixtures.js';
import { runProof } from '../src/core/store/run-key.js';

function fillSession(store: SessionStore, lines: number): { id: string; cursorBeforeTail: ReturnType<typeof readLines>['cursor']; snapshotText: string } {
  const s = store.create({ agentId: 'demo', environmentId: 'local' });
  const p = store.paths(s.id);
  const batch = conversationLines(lines - 1, (w) => runProof(store.runKey(s.id), s.id, w));
  // leave the last 10 for the timed part
  const tail = batch.length >= 10 ? batch.splice(batch.length - 10) : [];
  appendLines(p.events, batch);
  store.snapshot(s.id); // session.json now covers all but the last 10 lines
  const snapshotText = fs.readFileSync(p.snapshot, 'utf8');
  const cursorBeforeTail = readLines(p.events).cursor;
  appendLines(p.events, tail.length ? tail : Array.from({ length: 10 }, () => JSON.stringify({ type: 'user.message', content: 'tail' })));
  return { id: s.id, cursorBeforeTail, snapshotText };
}

export function benchReadTail() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-'));
  try {
    const store = new SessionStore(new Home(root), systemDeps());
    fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
    const big = fillSession(store, 100_000);
    const small = fillSession(store, 100);
    const bigFile = store.paths(big.id).events;
    const smallFile = store.paths(small.id).events;

    const readTail = (file: string, cursor: typeof big.cursorBeforeTail) => () => {
      const r = readLines(file, cursor);
      if (r.lines.length !== 10) throw new Error(`expected 10 lines, got ${r.lines.length}`);
      for (const l of r.lines) parseEventLine(l, Date.now());
    };
    const refresh = (id: string, text: string) => () => {
      fs.writeFileSync(store.paths(id).snapshot, text); // back to "10 lines behind"
      store.snapshot(id, { persist: false });
    };
    const RUNS = 300;
    const rb = timeSync(readTail(bigFile, big.cursorBeforeTail), RUNS);
    const rs = timeSync(readTail(smallFile, small.cursorBeforeTail), RUNS);
    const sb = timeSync(refresh(big.id, big.snapshotText), RUNS);
    const ss = timeSync(refresh(small.id, small.snapshotText), RUNS);
    const full = timeSync(() => readLines(bigFile), 5, 1);
    return {
      bench: 'read-tail',
      log_lines: { big: 100_000, small: 100 },
      log_bytes: { big: fs.statSync(bigFile).size, small: fs.statSync(smallFile).size },
      read_last_10_lines_ms: {
        big: { median: round(median(rb)), p99: round(percentile(rb, 99)) },
        small: { median: round(median(rs)), p99: round(percentile(rs, 99)) },
        ratio_big_over_small: round(median(rb) / median(rs), 2),
        target: 'ratio near 1',
      },
      snapshot_refresh_after_10_lines_ms: {
        big: { median: round(median(sb)), p99: round(percentile(sb, 99)) },
        small: { median: round(median(ss)), p99: round(percentile(ss, 99)) },
        ratio_big_over_small: round(median(sb) / median(ss), 2),
        target: 'ratio near 1',
      },
      for_contrast_full_read_of_big_log_ms: round(median(full), 1),
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
