/**
 * The daemon's young generation stays at its starting size
 * (src/cli/young-generation.ts): the V8 flag it sets once the process runs
 * must still be read by this Node, and the long-lived commands must ask for it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { COMMANDS } from '../../src/cli/command-catalog.js';

const MODULE = path.resolve(import.meta.dirname, '..', '..', 'src', 'cli', 'young-generation.ts');

/** The new space's size (MB) after an allocation burst with many survivors, in a fresh process; `hold`: holdYoungGeneration() first. */
function newSpaceAfterBurst(hold: boolean): number {
  const code = `
    import v8 from 'node:v8';
    import { holdYoungGeneration } from ${JSON.stringify(MODULE)};
    if (${hold}) holdYoungGeneration();
    let keep = [];
    for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = []; }
    const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
    console.log(s.space_size / 2 ** 20);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim());
}

test('held, the young generation does not grow past its starting size through a burst that grows it otherwise', () => {
  const grown = newSpaceAfterBurst(false);
  const held = newSpaceAfterBurst(true);
  assert.ok(grown > 8, `the burst grows an unheld young generation (new space ${grown} MB)`);
  assert.ok(held <= 4, `held: new space ${held} MB`);
});

test('the daemon and start (which runs it) are the long-lived commands', () => {
  assert.deepEqual(COMMANDS.filter((c) => c.longLived).map((c) => c.path.join(' ')), ['start', 'daemon']);
});
