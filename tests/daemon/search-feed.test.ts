/**
 * The daemon keeps the search index current from its own change
 * notifications: a line appended to a log is in the index without a search
 * or a reindex catching it up. The index is read directly (a search would
 * catch up by itself and prove nothing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { tempHome } from '../helpers/home.js';
import { cli } from '../helpers/cli.js';
import { spawnDaemon } from '../helpers/daemon-process.js';

/** Rows of the index whose text has `word`, read without catching anything up. */
function indexed(file: string, word: string): number {
  if (!fs.existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM fts WHERE fts MATCH ?').get(`"${word}"`) as { n: number }).n;
  } catch {
    return 0; // not made yet
  } finally {
    db.close();
  }
}

function until(pred: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (pred()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(check, 20);
    };
    check();
  });
}

test('a line appended to a log is indexed by the daemon, without a search or a reindex; a deleted index is made again', async (t) => {
  const h = tempHome(t);
  const created = await cli(['session', 'create', '--agent', 'demo', '--title', 'feed'], { home: h.root });
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  const log = path.join(h.root, 'sessions', id, 'events.jsonl');
  fs.appendFileSync(log, '{"type":"user.message","content":"before the daemon: wombat"}\n');
  const file = path.join(h.root, '.openboa', 'search.sqlite');
  const d = spawnDaemon(t, h.root, {});
  await d.line((l) => l.event === 'watcher_ready');
  await until(() => indexed(file, 'wombat') === 1, 'the start catch-up');

  fs.appendFileSync(log, '{"type":"user.message","content":"appended later: platypus"}\n');
  await until(() => indexed(file, 'platypus') === 1, 'the appended line in the index');

  // The index deleted under a running daemon: it opens a new one and feeds it.
  fs.rmSync(path.join(h.root, '.openboa', 'search.sqlite'), { force: true });
  for (const f of ['-wal', '-shm']) fs.rmSync(file + f, { force: true });
  fs.appendFileSync(log, '{"type":"user.message","content":"after the delete: echidna"}\n');
  await until(() => indexed(file, 'echidna') === 1 && indexed(file, 'wombat') === 1, 'the index made again');
  assert.equal(await d.term(), 0);
});

test('the feed sizes its chunks to about INDEX_BUDGET_MS: halved at once when over, grown by a quarter at most when under, within bounds', async () => {
  const { ChunkPacer, INDEX_BUDGET_MS } = await import('../../src/daemon/search-feed.js');
  const p = new ChunkPacer();
  assert.equal(p.lines, 64);
  p.took(64, INDEX_BUDGET_MS * 8);
  assert.equal(p.lines, 8, 'eight times over: an eighth (never below 8)');
  p.took(8, INDEX_BUDGET_MS / 100);
  assert.equal(p.lines, 10, 'far under: a quarter more, not a hundred times');
  for (let i = 0; i < 100; i++) p.took(p.lines, 0);
  assert.equal(p.lines, 1000, 'never more than CHUNK_LINES');
  p.took(3, INDEX_BUDGET_MS * 50);
  assert.equal(p.lines, 1000, 'a short chunk (the end of a log) says nothing of the cost');
  p.took(1000, INDEX_BUDGET_MS * 2);
  assert.equal(p.lines, 500);
});
