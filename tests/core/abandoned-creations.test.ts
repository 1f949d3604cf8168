/**
 * Half-made session folders (`sessions/.creating-*`, session-dirs.ts) are
 * removed at a daemon's start. Anyone who can write sessions/ can make or
 * fill one, and swap a folder inside it for a symlink while it is removed:
 * the removal must never delete what the symlink points to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { removeAbandonedCreations } from '../../src/core/store/session-dirs.js';
import { beforeHomeRemoved, tempHome } from '../helpers/home.js';
import { startSwapper } from '../helpers/swapper.js';

const FILES = 20;
/**
 * Rounds of removal under the swapping. A removal that walks by path (fs.rmSync recursive) needs
 * the swap to land between its look at d and its unlinks below it: it deleted files of the victim
 * within the first five rounds in each of three runs here, and in at least one round in ten in a
 * looser loop, so 100 rounds miss it with odds far below one in a thousand.
 */
const ROUNDS = 100;

test('an abandoned creation whose subfolder is swapped with a symlink during its removal: nothing outside it is deleted', async (t) => {
  const h = tempHome(t, { bundled: false });
  const victim = path.join(h.root, 'victim');
  const names = Array.from({ length: FILES }, (_, k) => `f${k}`);
  /** Round i: sessions folder round-<i> holding .creating-x/a/d (a folder with FILES files) and l, a symlink to the victim. */
  const prepare = (i: number) => {
    const sessions = path.join(h.root, `round-${i}`);
    const d = path.join(sessions, '.creating-x', 'a', 'd');
    fs.mkdirSync(d, { recursive: true });
    for (const n of names) fs.writeFileSync(path.join(d, n), 'planted');
    fs.symlinkSync(victim, path.join(sessions, 'l'));
    // `cur` names this round's folder: the swapper exchanges cur/.creating-x/a/d and cur/l, whichever round cur points to.
    fs.symlinkSync(`round-${i}`, path.join(h.root, 'cur.next'));
    fs.renameSync(path.join(h.root, 'cur.next'), path.join(h.root, 'cur'));
    return sessions;
  };
  fs.mkdirSync(victim);
  let sessions = prepare(0);
  const swapper = await startSwapper(h.root, 'cur/.creating-x/a/d', 'cur/l', { seconds: 600, done: path.join(h.root, 'swapper-done') });
  beforeHomeRemoved(t, () => swapper.stop());
  for (let i = 0; i < ROUNDS; i++) {
    if (i > 0) sessions = prepare(i);
    for (const n of names) fs.writeFileSync(path.join(victim, n), 'victim');
    removeAbandonedCreations(sessions, Date.now() + 60_000, 0);
    assert.deepEqual(fs.readdirSync(victim).sort(), [...names].sort(), `round ${i} (${swapper.mode}): the victim's files are all there`);
  }
  assert.equal(fs.existsSync(swapper.done), false, 'the swapping went on through every round');
});

test('an abandoned creation is removed whole, a recent one and a symlink of that name are left', (t) => {
  const h = tempHome(t, { bundled: false });
  const sessions = h.home.sessionsDir;
  const outside = path.join(h.root, 'outside');
  fs.mkdirSync(path.join(outside, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'sub', 'keep'), 'x');
  const old = path.join(sessions, '.creating-old');
  fs.mkdirSync(path.join(old, 'workspace', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(old, 'workspace', 'deep', 'f'), 'x');
  fs.symlinkSync(outside, path.join(old, 'workspace', 'link'));
  fs.mkdirSync(path.join(sessions, '.creating-fresh'));
  fs.symlinkSync(outside, path.join(sessions, '.creating-link'));
  const now = Date.now();
  const past = new Date(now - 3_600_000);
  fs.utimesSync(old, past, past);
  fs.lutimesSync(path.join(sessions, '.creating-link'), past, past);
  assert.equal(removeAbandonedCreations(sessions, now, 600_000), 1);
  assert.deepEqual(fs.readdirSync(sessions).sort(), ['.creating-fresh', '.creating-link']);
  assert.ok(fs.existsSync(path.join(outside, 'sub', 'keep')));
});
