/**
 * The memory scan under a hostile agent (docs/memory.md, "Versions"): it
 * never stalls the event loop, records at most a bounded number of changes
 * per scan (the rest later), keeps the store within a run budget and a
 * quota, versions every name the agent can make (temp-like, not UTF-8),
 * says when it stopped short instead of inferring deletions, and removes
 * the temp files a crash left behind.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { tempHome } from '../helpers/home.js';
import { ManualClock } from '../helpers/clock.js';
import { recordContent } from '../../src/core/memory/memory-dir.js';
import { MEMORY_SCAN_MAX_CHANGES, MEMORY_TEMP_STALE_MS, newScanState, SCAN_MIN_STORED, scanAndRecord } from '../../src/core/memory/memory-scan.js';
import { CHANGED, scanTree } from '../../src/core/memory/tree-scan.js';
import { startSwapper } from '../helpers/swapper.js';
import { memoryVersioned, readContent, readVersions, sha256Of } from '../../src/core/memory/version-store.js';
import { VersionLine } from '../../src/core/schema/index.js';
import { Redactor } from '../../src/core/foundation/redact.js';

const who = { session_id: 'sess', wake_id: 'wrun_1' };

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const v = memoryVersioned(h.home, 'a');
  fs.mkdirSync(v.dir, { recursive: true });
  return { v, clock: new ManualClock(Date.parse('2026-11-23T10:00:00Z')) };
}

const ops = (lines: VersionLine[]) => lines.map((l) => l.op);

test('a scan of 5,000 changed files keeps the event loop turning and records at most MEMORY_SCAN_MAX_CHANGES lines, the rest at the next scans', async (t) => {
  const { v, clock } = setup(t);
  for (let i = 0; i < 5000; i++) fs.writeFileSync(path.join(v.dir, `f${i}`), `content ${i} ${'x'.repeat(i % 200)}`);
  // No time budget: this is about the bound in lines (the budget has tests of its own).
  const st = newScanState(v, { walkBudgetMs: Infinity, storeBudgetMs: Infinity });
  let ticks = 0;
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    ticks += 1;
  }, 1);
  const started = performance.now();
  let lines: VersionLine[];
  try {
    lines = await scanAndRecord(v, st, who, clock);
  } finally {
    clearInterval(timer);
  }
  const took = performance.now() - started;
  longest = Math.max(longest, performance.now() - last);
  // The scan yields every few dozen files and awaits each content write: a timer runs
  // hundreds of times; a synchronous scan lets it run a handful of times at most.
  assert.ok(ticks >= 100, `the timer ran ${ticks} times during a ${Math.round(took)} ms scan`);
  // Relative, not in ms: a loaded machine can deschedule the whole process for longer than any fixed bound,
  // but a scan that never yields stalls the loop for about all of its time.
  assert.ok(longest < took / 2, `the longest stall was ${Math.round(longest)} ms of a ${Math.round(took)} ms scan`);
  assert.equal(lines.filter((l) => l.op === 'write').length, MEMORY_SCAN_MAX_CHANGES);
  assert.match(lines.at(-1)?.message ?? '', /more than 1000 changes at once/);
  assert.equal(lines.at(-1)?.path, '.');
  // The rest carry to the next scans; the marker is logged once per run.
  let total = MEMORY_SCAN_MAX_CHANGES;
  for (let i = 0; i < 5 && total < 5000; i++) {
    const more = await scanAndRecord(v, st, who, clock);
    assert.ok(more.every((l) => l.op === 'write'));
    total += more.length;
  }
  assert.equal(total, 5000);
  assert.deepEqual(await scanAndRecord(v, st, who, clock), []);
  const logged = readVersions(v);
  assert.deepEqual(logged.notes, []);
  assert.equal(logged.lines.filter((l) => l.line.op === 'write').length, 5000);
  assert.equal(readContent(v, sha256Of(Buffer.from('content 7 xxxxxxx')))?.toString(), 'content 7 xxxxxxx');
});

test('past the run budget or the store quota a change is logged over_quota, without content, once', async (t) => {
  const { v, clock } = setup(t);
  for (let i = 0; i < 4; i++) fs.writeFileSync(path.join(v.dir, `f${i}`), String(i).repeat(100));
  const st = newScanState(v, { runMaxStoredBytes: 250 });
  const lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(ops(lines), ['write', 'write', 'over_quota', 'over_quota']);
  const over = lines[2]!;
  assert.deepEqual([over.sha256, over.bytes], [sha256Of(Buffer.from('2'.repeat(100))), 100]);
  assert.equal(readContent(v, over.sha256!), null, 'its content is not stored');
  assert.deepEqual(await scanAndRecord(v, st, who, clock), [], 'unchanged: not logged again');
  // The same content under another name costs nothing: it is stored already.
  fs.writeFileSync(path.join(v.dir, 'copy'), '0'.repeat(100));
  assert.deepEqual(ops(await scanAndRecord(v, st, who, clock)), ['write']);
  // The store's quota holds across runs (counted from the log).
  const next = newScanState(v, { storeMaxContents: 2 });
  fs.writeFileSync(path.join(v.dir, 'new'), 'new');
  assert.deepEqual(ops(await scanAndRecord(v, next, who, clock)), ['over_quota']);
  const bytes = newScanState(v, { storeMaxBytes: 200 });
  fs.writeFileSync(path.join(v.dir, 'new'), 'newer');
  assert.deepEqual(ops(await scanAndRecord(v, bytes, who, clock)), ['over_quota']);
});

test('names that look like temp files, and names that are not UTF-8, are versioned', async (t) => {
  const { v, clock } = setup(t);
  fs.mkdirSync(path.join(v.dir, 'd'));
  fs.writeFileSync(path.join(v.dir, 'd', '.stash.abcdefabcdef.openboa-tmp'), 'hidden?');
  fs.writeFileSync(path.join(v.dir, '.LEARNINGS.md.abcdefabcdef.tmp'), 'hidden too?');
  fs.writeFileSync(Buffer.from([...Buffer.from(`${v.dir}/bad`), 0xff, 0xfe]), 'latin');
  const lines = await scanAndRecord(v, newScanState(v), who, clock);
  const byPath = new Map(lines.map((l) => [l.path, l]));
  assert.equal(byPath.get('d/.stash.abcdefabcdef.openboa-tmp')?.op, 'write');
  assert.equal(byPath.get('.LEARNINGS.md.abcdefabcdef.tmp')?.op, 'write');
  const bad = byPath.get('bad\\xff\\xfe');
  assert.equal(bad?.op, 'write', `logged: ${[...byPath.keys()].join(', ')}`);
  assert.equal(readContent(v, bad!.sha256!)?.toString(), 'latin');
  // A UTF-8 name spelling the escape: neither file is trusted, the scan says so, nothing is deleted.
  fs.writeFileSync(path.join(v.dir, 'bad\\xff\\xfe'), 'impostor');
  const again = await scanAndRecord(v, newScanState(v), who, clock);
  assert.deepEqual(ops(again), ['scan_incomplete']);
  assert.match(again[0]!.message ?? '', /two files are named/);
});

test('a versioned file moved deeper than the walk goes is not logged deleted: the scan says it stopped short', async (t) => {
  const { v, clock } = setup(t);
  fs.writeFileSync(path.join(v.dir, 'keep.md'), 'keep');
  const st = newScanState(v);
  assert.deepEqual(ops(await scanAndRecord(v, st, who, clock)), ['write']);
  let deep = v.dir;
  for (let i = 0; i < 70; i++) deep = path.join(deep, 'd');
  fs.mkdirSync(deep, { recursive: true });
  fs.renameSync(path.join(v.dir, 'keep.md'), path.join(deep, 'keep.md'));
  const lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(ops(lines), ['scan_incomplete']);
  assert.match(lines[0]!.message ?? '', /deeper than the scan goes.*no deletion was inferred/);
});

test("a run's first scan removes temp files a crash left (older than MEMORY_TEMP_STALE_MS) in memory/ and the store, not fresh ones", async (t) => {
  const { v, clock } = setup(t);
  const old = (clock.now() - 20 * 60_000) / 1000;
  const stale = path.join(v.dir, '.MEMORY.md.0123456789ab.openboa-tmp');
  const fresh = path.join(v.dir, '.MEMORY.md.ba9876543210.openboa-tmp');
  const staleStore = path.join(v.store, 'ab', `.${'ab'.repeat(32)}.0123456789ab.tmp`);
  fs.mkdirSync(path.dirname(staleStore), { recursive: true });
  for (const f of [stale, fresh, staleStore]) fs.writeFileSync(f, 'x'.repeat(1000));
  fs.utimesSync(stale, old, old);
  fs.utimesSync(staleStore, old, old);
  fs.utimesSync(fresh, clock.now() / 1000, clock.now() / 1000);
  const lines = await scanAndRecord(v, newScanState(v), who, clock);
  assert.equal(fs.existsSync(stale), false);
  assert.equal(fs.existsSync(staleStore), false);
  assert.equal(fs.existsSync(fresh), true, 'maybe a write in progress elsewhere');
  assert.deepEqual(
    lines.map((l) => [l.op, l.path]),
    [['write', '.MEMORY.md.ba9876543210.openboa-tmp']],
  );
});

test('stale temps are looked for at most once per MEMORY_TEMP_STALE_MS per directory in a process, not at every run', async (t) => {
  const { v, clock } = setup(t);
  const plant = (name: string) => {
    const f = path.join(v.dir, name);
    fs.writeFileSync(f, 'x');
    const old = (clock.now() - 20 * 60_000) / 1000;
    fs.utimesSync(f, old, old);
    return f;
  };
  fs.mkdirSync(v.dir, { recursive: true });
  const first = plant('.a.md.0123456789ab.openboa-tmp');
  await scanAndRecord(v, newScanState(v), who, clock);
  assert.equal(fs.existsSync(first), false, "the directory's first scan in this process tidies");
  // Another run (a new scan state) a minute later: no second look; the temp is seen as a file like any other.
  const second = plant('.b.md.0123456789ab.openboa-tmp');
  await clock.advance(60_000);
  await scanAndRecord(v, newScanState(v), who, clock);
  assert.equal(fs.existsSync(second), true);
  // Once MEMORY_TEMP_STALE_MS has passed since the last look, the next run's first scan looks again.
  await clock.advance(MEMORY_TEMP_STALE_MS);
  await scanAndRecord(v, newScanState(v), who, clock);
  assert.equal(fs.existsSync(second), false);
});

/** Bytes read through fs.readSync while `fn` runs (file contents, and the version log). */
async function bytesRead(t: TestContext, fn: () => Promise<unknown>): Promise<number> {
  let bytes = 0;
  const real = fs.readSync;
  const spy = t.mock.method(fs, 'readSync', (...args: Parameters<typeof fs.readSync>) => {
    const n = (real as (...a: unknown[]) => number)(...args);
    bytes += n;
    return n;
  });
  try {
    await fn();
  } finally {
    spy.mock.restore();
  }
  return bytes;
}

test("within a run, unchanged files are not read again; each run's first scan hashes them afresh, and reads the log on from where the last run stopped", async (t) => {
  const { v, clock } = setup(t);
  // racyMs 0: these files were written a moment ago, and this test is not about that (see the next one).
  const run = () => newScanState(v, { racyMs: 0 });
  for (const n of ['a.md', 'b.md', 'c.md']) fs.writeFileSync(path.join(v.dir, n), n.repeat(20_000));
  const first = run();
  assert.equal((await scanAndRecord(v, first, who, clock)).length, 3);
  assert.ok((await bytesRead(t, () => scanAndRecord(v, first, who, clock))) < 1000, 'the same run: nothing read again');
  // The next run does not trust identities it did not see (a write through mmap can change a file and not its times).
  assert.ok((await bytesRead(t, () => scanAndRecord(v, run(), who, clock))) >= 60_000, 'the next run hashes afresh');
  // One file changed: recorded.
  fs.writeFileSync(path.join(v.dir, 'b.md'), 'changed');
  assert.deepEqual(
    (await scanAndRecord(v, run(), who, clock)).map((l) => [l.op, l.path]),
    [['write', 'b.md']],
  );
  // The version log is read on, not from its start: with a long log and an empty directory, a run's scan reads little.
  const big = () => newScanState(v, { racyMs: 0, maxChanges: 5000, walkBudgetMs: Infinity, storeBudgetMs: Infinity });
  for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(v.dir, `n${i}.md`), `${i}`);
  await scanAndRecord(v, big(), who, clock);
  for (const n of fs.readdirSync(v.dir)) fs.rmSync(path.join(v.dir, n));
  await scanAndRecord(v, big(), who, clock);
  assert.ok(fs.statSync(v.log).size > 400_000, `log ${fs.statSync(v.log).size} bytes`);
  // (A scan reads back the lines the scan before it appended, once.)
  await scanAndRecord(v, run(), who, clock);
  const read = await bytesRead(t, () => scanAndRecord(v, run(), who, clock));
  assert.ok(read < 20_000, `read ${read} bytes`);
});

test('a file that changed within RACY_MS of being read is read again by the next scan: a same-size rewrite in the same tick keeps its identity', async (t) => {
  const { v, clock } = setup(t);
  fs.writeFileSync(path.join(v.dir, 'fresh.md'), 'x'.repeat(50_000));
  const state = newScanState(v, { racyMs: 60 * 60_000 });
  await scanAndRecord(v, state, who, clock);
  assert.ok((await bytesRead(t, () => scanAndRecord(v, state, who, clock))) >= 50_000, 'read again');
  // Once its change is older than the window, it is trusted: not read again.
  state.limits.racyMs = 0;
  assert.ok((await bytesRead(t, () => scanAndRecord(v, state, who, clock))) >= 50_000, 'the racy key was not kept');
  assert.ok((await bytesRead(t, () => scanAndRecord(v, state, who, clock))) < 1000);
});

test('a path longer than a version line can name (deeper than PATH_MAX) is left out and the scan marked incomplete; the other changes are recorded', async (t) => {
  const { v, clock } = setup(t);
  // 17 levels of 250-character names: over 4,096 characters, made one level at a time as the agent could.
  const made = spawnSync('bash', ['-c', `set -e; for i in $(seq 17); do mkdir ${'d'.repeat(250)}; cd ${'d'.repeat(250)}; done; echo deep > f.md`], { cwd: v.dir });
  try {
    assert.equal(made.status, 0, String(made.stderr));
    fs.writeFileSync(path.join(v.dir, 'MEMORY.md'), 'one');
    const state = newScanState(v);
    const lines = await scanAndRecord(v, state, who, clock);
    assert.deepEqual(
      lines.map((l) => l.op),
      ['write', 'scan_incomplete'],
    );
    assert.equal(lines[0]!.path, 'MEMORY.md');
    assert.match(lines[1]!.message ?? '', /longer than 4096 characters/);
    fs.writeFileSync(path.join(v.dir, 'MEMORY.md'), 'two');
    assert.deepEqual(
      (await scanAndRecord(v, newScanState(v), who, clock)).map((l) => [l.op, l.path]),
      [['write', 'MEMORY.md'], ['scan_incomplete', '.']],
    );
  } finally {
    // Removed by rm, which goes one level at a time (the home's cleanup cannot name it whole).
    spawnSync('rm', ['-rf', 'd'.repeat(250)], { cwd: v.dir });
  }
});

test('old log lines still parse; a scan_incomplete marker is only ever the directory', () => {
  const base = { sha256: null, bytes: null, session_id: 's', wake_id: 'w', at: '2026-11-23T10:00:00.000Z' };
  assert.ok(VersionLine.safeParse({ ...base, path: 'a.md', op: 'delete' }).success);
  assert.ok(VersionLine.safeParse({ ...base, path: '.', op: 'scan_incomplete', message: 'why' }).success);
  assert.ok(!VersionLine.safeParse({ ...base, path: 'a.md', op: 'scan_incomplete' }).success);
  assert.ok(!VersionLine.safeParse({ ...base, path: '.', op: 'delete' }).success);
  assert.ok(!VersionLine.safeParse({ ...base, path: 'a.md', op: 'over_quota' }).success, 'over_quota names the sha256 it did not keep');
});

/** Swaps the directory `a` and the symlink `b` in `dir` with three renames (what a racing shell does between two looks). */
function swapNow(dir: string, a: string, b: string) {
  fs.renameSync(path.join(dir, a), path.join(dir, 'swap-tmp'));
  fs.renameSync(path.join(dir, b), path.join(dir, a));
  fs.renameSync(path.join(dir, 'swap-tmp'), path.join(dir, b));
}

test('an entry that changes kind under the walk (a directory swapped with a symlink) makes the scan incomplete, never complete without it', async (t) => {
  const { v } = setup(t);
  fs.writeFileSync(path.join(v.dir, 'a.md'), 'first in the walk');
  fs.mkdirSync(path.join(v.dir, 'rd'));
  fs.writeFileSync(path.join(v.dir, 'rd', 'note.md'), 'a note');
  fs.symlinkSync('/etc', path.join(v.dir, 'rd_alt'));
  let swapped = false;
  // The walk has listed the top (a.md, rd as a directory, rd_alt as a symlink) when it meets a.md: swap there.
  const scan = await scanTree(v.dir, {
    maxEntries: 100,
    maxFileBytes: 1000,
    maxTotalBytes: 10_000,
    exclude: (rel) => {
      if (rel === 'a.md' && !swapped) {
        swapNow(v.dir, 'rd', 'rd_alt');
        swapped = true;
      }
      return false;
    },
  });
  assert.ok(swapped);
  // rd/note.md was never seen (rd was a symlink when the walk looked): a complete scan would log it deleted.
  assert.equal(scan.files.has('rd/note.md'), false);
  assert.equal(scan.complete, false);
  assert.equal(scan.incomplete, CHANGED);
});

test('scans while another process swaps a directory and a symlink in a loop (RENAME_EXCHANGE) end, never lose the files from the versions, and say the directory kept changing', async (t) => {
  const { v, clock } = setup(t);
  fs.mkdirSync(path.join(v.dir, 'rd'));
  const notes = Array.from({ length: 20 }, (_, i) => `note-${i}.md`);
  for (const n of notes) fs.writeFileSync(path.join(v.dir, 'rd', n), n);
  fs.symlinkSync('/etc', path.join(v.dir, 'rd_alt'));
  // The starting point, untimed: a loaded machine could cut this first walk short and leave notes to a later scan.
  assert.equal((await scanAndRecord(v, newScanState(v, { walkBudgetMs: Infinity, storeBudgetMs: Infinity }), who, clock)).length, 20);
  const swapper = await startSwapper(v.dir, 'rd', 'rd_alt', { seconds: 60, done: path.join(path.dirname(v.dir), 'swapper-done') });
  t.after(() => swapper.stop());
  const logged: VersionLine[] = [];
  const lost: string[] = [];
  // At least 40 scans, and on until one has seen the swapping (a loaded machine may give the swapper little time), at most 2,000.
  const noticed = () => logged.some((l) => l.op === 'scan_incomplete' && l.message?.startsWith(CHANGED));
  for (let i = 0; i < 2000 && (i < 40 || !noticed()); i++) {
    logged.push(...(await scanAndRecord(v, newScanState(v), who, clock)));
    // Each note is always in the directory, under rd/ or rd_alt/: the log must say one or the other.
    const latest = new Map(readVersions(v).lines.map((l) => [l.line.path, l.line.op]));
    const present = (p: string) => latest.has(p) && latest.get(p) !== 'delete';
    lost.push(...notes.filter((n) => !present(`rd/${n}`) && !present(`rd_alt/${n}`)).map((n) => `scan ${i}: ${n}`));
  }
  await swapper.stop();
  assert.deepEqual(lost.slice(0, 5), [], `notes logged deleted under both names while the directory was being swapped (${swapper.mode})`);
  assert.ok(
    logged.some((l) => l.op === 'scan_incomplete' && l.message?.startsWith(CHANGED)),
    `no scan noticed the swapping: ${JSON.stringify(logged.map((l) => [l.op, l.path]))}`,
  );
});

test("a scan's time budget stops its walk (incomplete, saying so) and its storing (the rest at the next scans), measured on the clock it is given", async (t) => {
  const { v, clock } = setup(t);
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(v.dir, `f${String(i).padStart(3, '0')}`), `content ${i}`);
  // A clock that moves one "ms" each time it is read: the budget counts steps of work, not real time.
  let ticks = 0;
  const work = () => ticks++;
  const walkCut = newScanState(v, { walkBudgetMs: 50, racyMs: 0 }, Redactor.none, work);
  const first = await scanAndRecord(v, walkCut, who, clock);
  const writes = first.filter((l) => l.op === 'write').length;
  assert.ok(writes > 0 && writes < 60, `${writes} files recorded by a scan whose walk had 50 steps`);
  assert.equal(first.at(-1)?.op, 'scan_incomplete');
  assert.match(first.at(-1)?.message ?? '', /^the scan took longer than its time budget \(50 ms\): no deletion was inferred/);
  // Storing: at least SCAN_MIN_STORED contents each scan, then as many as the budget's steps.
  const storeCut = newScanState(v, { walkBudgetMs: Infinity, storeBudgetMs: 3, racyMs: 0 }, Redactor.none, work);
  const before = readVersions(v).lines.length;
  const second = await scanAndRecord(v, storeCut, who, clock);
  const stored = second.filter((l) => l.op === 'write');
  assert.ok(stored.length >= SCAN_MIN_STORED && stored.length < 200 - writes, `${stored.length} contents stored`);
  assert.match(second.at(-1)?.message ?? '', /more changes than its time budget \(3 ms\) could store: the other changes are recorded by the next scans/);
  for (const l of stored) assert.ok(readContent(v, l.sha256!), `${l.path}: its line names a stored content`);
  assert.equal(readVersions(v).lines.length, before + second.length);
  // With time, the next scans record the rest: every file once.
  const rest = newScanState(v, { walkBudgetMs: Infinity, storeBudgetMs: Infinity, racyMs: 0 });
  await scanAndRecord(v, rest, who, clock);
  const all = readVersions(v).lines.filter((l) => l.line.op === 'write').map((l) => l.line.path);
  assert.equal(all.length, 200);
  assert.equal(new Set(all).size, 200);
});

test("the walk holds no lock: another session's write to memory is recorded while a scan walks the directory, and the scan does not undo it", async (t) => {
  const { v, clock } = setup(t);
  fs.writeFileSync(path.join(v.dir, 'a.md'), 'first');
  for (let i = 0; i < 500; i++) fs.writeFileSync(path.join(v.dir, `f${i}`), `content ${i}`);
  let scanned = false;
  const scanning = scanAndRecord(v, newScanState(v, { walkBudgetMs: Infinity, storeBudgetMs: Infinity }), who, clock).then((lines) => {
    scanned = true;
    return lines;
  });
  // A few turns of the event loop: the scan is walking (it yields every few dozen files), past a.md (the first).
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  assert.equal(scanned, false);
  // As the file tools do: the file written, then its version recorded.
  fs.writeFileSync(path.join(v.dir, 'a.md'), 'second');
  fs.writeFileSync(path.join(v.dir, 'other.md'), 'from another session');
  await recordContent(v, 'a.md', Buffer.from('second'), 'write', { session_id: 'other', wake_id: 'wrun_2' }, clock);
  await recordContent(v, 'other.md', Buffer.from('from another session'), 'write', { session_id: 'other', wake_id: 'wrun_2' }, clock);
  assert.equal(scanned, false, "the other session's writes waited for the whole scan");
  const lines = await scanning;
  assert.equal(lines.filter((l) => l.op === 'write' && l.path.startsWith('f')).length, 500);
  // What the walk saw of a.md ("first") is older than the other session's record: not logged over it; nor is
  // other.md, recorded after the walk had listed the directory, logged deleted.
  assert.deepEqual(
    lines.filter((l) => !l.path.startsWith('f')).map((l) => [l.op, l.path]),
    [],
  );
  const latest = new Map(readVersions(v).lines.map((l) => [l.line.path, l.line]));
  assert.equal(latest.get('a.md')?.sha256, sha256Of(Buffer.from('second')));
  assert.deepEqual(await scanAndRecord(v, newScanState(v), who, clock), []);
});
