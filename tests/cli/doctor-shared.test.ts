/**
 * `openboa doctor` on a home shared between hosts (doctor-shared.ts): a real
 * lease round trip, the file system's clock against this host's, and
 * whether inotify sees a write; a home where no lock can be made fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempHome } from '../helpers/home.js';
import { checkSharedHome } from '../../src/cli/commands/doctor-shared.js';

test('a good shared home: the lock round trip works, the clock agrees, the watch is noted', async (t) => {
  const h = tempHome(t);
  h.write('openboa.yaml', 'shared: true\n');
  const checks = await checkSharedHome(h.home);
  const by = Object.fromEntries(checks.map((c) => [c.name, c]));
  assert.equal(by['shared lock']?.status, 'ok', by['shared lock']?.message);
  assert.match(by['shared lock']!.message, /refused to a second taker/);
  assert.equal(by['shared clock']?.status, 'ok');
  assert.ok(by['shared watch'], 'the watch was tried');
  assert.deepEqual(fs.readdirSync(path.join(h.root, '.openboa')), [], 'nothing left behind');
});

test("a shared home whose clock is off says so; one where no lock can be made fails; an unshared one is one line", async (t) => {
  const h = tempHome(t);
  h.write('openboa.yaml', 'shared: true\n');
  const skewed = await checkSharedHome(h.home, () => Date.now() + 30_000);
  const clock = skewed.find((c) => c.name === 'shared clock')!;
  assert.equal(clock.status, 'warn');
  assert.match(clock.message, /behind this host's: run NTP/);
  fs.rmSync(path.join(h.root, '.openboa'), { recursive: true, force: true });
  fs.writeFileSync(path.join(h.root, '.openboa'), 'not a folder');
  const broken = await checkSharedHome(h.home);
  assert.equal(broken[0]?.status, 'fail');
  assert.match(broken[0]!.message, /cannot make/);
  const single = tempHome(t);
  const one = await checkSharedHome(single.home);
  assert.equal(one.length, 1);
  assert.equal(one[0]?.status, 'info');
});
