/**
 * Taking a session's lease (store/session-lease.ts): on a shared home the
 * journals' cached attributes are fetched again after the lease is taken,
 * without changing the files, and nothing put in a journal's place (a FIFO,
 * a symlink) can hold the taker. (Over a real network file system:
 * tests/multihost/lease-handover.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { refreshAttributes, takeSessionLease } from '../../src/core/store/session-lease.js';
import { unitRun } from '../helpers/unit-run.js';

test('on a shared home the lease is taken and the journals are left as they were: content, mode and mtime', async (t) => {
  const u = unitRun(t);
  const id = u.newSession();
  const p = u.store.paths(id);
  fs.appendFileSync(p.wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', delay_seconds: 60, reason: 'x' })}\n`);
  fs.chmodSync(p.events, 0o600);
  const before = [p.events, p.wakeQueue].map((f) => ({ text: fs.readFileSync(f, 'utf8'), st: fs.statSync(f) }));
  const lease = await takeSessionLease(p, true, { purpose: 'test', nowIso: new Date().toISOString() });
  try {
    assert.ok(fs.existsSync(p.lease), 'the lease is held');
    [p.events, p.wakeQueue].forEach((f, i) => {
      const st = fs.statSync(f);
      assert.equal(fs.readFileSync(f, 'utf8'), before[i]!.text);
      assert.equal(st.mode, before[i]!.st.mode, `${path.basename(f)}: mode kept`);
      assert.equal(st.mtimeMs, before[i]!.st.mtimeMs, `${path.basename(f)}: mtime kept`);
    });
  } finally {
    await lease.release();
  }
});

test('a FIFO or a symlink in a journal’s place neither blocks nor is followed', (t) => {
  const u = unitRun(t);
  const id = u.newSession();
  const p = u.store.paths(id);
  fs.rmSync(p.wakeQueue, { force: true });
  execFileSync('mkfifo', [p.wakeQueue]);
  const outside = path.join(u.h.root, 'outside.txt');
  fs.writeFileSync(outside, 'not the log\n');
  fs.chmodSync(outside, 0o640);
  const link = path.join(p.dir, 'linked.jsonl');
  fs.symlinkSync(outside, link);
  // In a child process: an open that blocks on the FIFO would hang it, and the timeout says so.
  const mod = path.resolve('src/core/store/session-lease.ts');
  const code = `import { refreshAttributes } from ${JSON.stringify(mod)}; refreshAttributes(${JSON.stringify(p.wakeQueue)}); refreshAttributes(${JSON.stringify(link)}); console.log('returned');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.stdout.trim(), 'returned', `refreshAttributes did not return (signal ${r.signal}): ${r.stderr}`);
  assert.equal(fs.statSync(outside).mode & 0o777, 0o640);
  // In-process as well, now that it is known to return.
  refreshAttributes(p.wakeQueue);
});
