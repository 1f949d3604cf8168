import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { VirtualFs, PathError, mountinfoEscape, type OpenOptions } from '../../src/core/sandbox/virtual-fs.js';
import { tempHome } from '../helpers/home.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  const rt = path.join(h.root, 'rt');
  const secret = path.join(h.root, 'secret.txt');
  fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
  fs.mkdirSync(rt);
  fs.writeFileSync(path.join(ws, 'a.txt'), 'A');
  fs.writeFileSync(path.join(rt, 'shell.json'), '{}');
  fs.writeFileSync(secret, 'host secret');
  const vfs = new VirtualFs([
    { target: '/workspace', host: ws, writable: true },
    { target: '/runtime', host: rt, writable: false },
  ]);
  return { ws, rt, secret, vfs, root: h.root };
}


/** Opens and closes at once; returns the sandbox path the walk ended on. */
function resolve(vfs: VirtualFs, input: string, o: OpenOptions = {}): string {
  const h = vfs.open(input, o);
  h.close();
  return h.virtual;
}

function read(vfs: VirtualFs, input: string): string {
  const h = vfs.open(input);
  try {
    return fs.readFileSync(h.fd, 'utf8');
  } finally {
    h.close();
  }
}

const refused = (fn: () => unknown, re: RegExp) => assert.throws(fn, (e: unknown) => e instanceof PathError && re.test((e as Error).message));

test('relative and absolute paths map into the workspace; /runtime is readable', (t) => {
  const { vfs } = setup(t);
  assert.equal(read(vfs, 'a.txt'), 'A');
  assert.equal(resolve(vfs, '/workspace/sub/../a.txt'), '/workspace/a.txt');
  assert.equal(read(vfs, '/runtime/shell.json'), '{}');
  assert.equal(resolve(vfs, 'new/dir/file.txt', { write: true, parents: true }), '/workspace/new/dir/file.txt');
});

test('escapes by .. and by absolute path are refused', (t) => {
  const { vfs } = setup(t);
  refused(() => resolve(vfs, '../secret.txt'), /outside the workspace/);
  refused(() => resolve(vfs, '/workspace/../../etc/passwd'), /outside the workspace/);
  refused(() => resolve(vfs, '/etc/passwd'), /outside the workspace/);
  refused(() => resolve(vfs, 'sub/../../x', { write: true }), /outside the workspace/);
});

test('a symlinked file pointing outside is refused; one pointing inside is followed', (t) => {
  const { vfs, ws, secret } = setup(t);
  fs.symlinkSync(secret, path.join(ws, 'leak.txt'));
  refused(() => resolve(vfs, '/workspace/leak.txt'), /outside the workspace/);
  refused(() => resolve(vfs, '/workspace/leak.txt', { write: true }), /outside the workspace/);
  fs.symlinkSync('a.txt', path.join(ws, 'alias.txt'));
  assert.equal(resolve(vfs, 'alias.txt'), '/workspace/a.txt');
});

test('a symlinked directory pointing outside is refused, also for new files below it', (t) => {
  const { vfs, ws, root } = setup(t);
  fs.symlinkSync(root, path.join(ws, 'up'));
  refused(() => resolve(vfs, '/workspace/up/secret.txt'), /outside the workspace/);
  refused(() => resolve(vfs, '/workspace/up/newfile', { write: true }), /outside the workspace/);
  fs.symlinkSync('/', path.join(ws, 'rootlink'));
  refused(() => resolve(vfs, '/workspace/rootlink/etc/passwd'), /outside the workspace/);
});

test('absolute link targets are sandbox paths: /workspace/x means the session workspace', (t) => {
  const { vfs, ws } = setup(t);
  fs.symlinkSync('/workspace/a.txt', path.join(ws, 'sandboxlink'));
  assert.equal(read(vfs, 'sandboxlink'), 'A');
  fs.symlinkSync('/runtime/shell.json', path.join(ws, 'rtlink'));
  assert.equal(resolve(vfs, 'rtlink'), '/runtime/shell.json');
  refused(() => resolve(vfs, 'rtlink', { write: true }), /\/runtime is read-only/);
});

test('writes to read-only mounts and symlink loops are refused', (t) => {
  const { vfs, ws } = setup(t);
  refused(() => resolve(vfs, '/runtime/shell.json', { write: true }), /read-only/);
  fs.symlinkSync('loop2', path.join(ws, 'loop1'));
  fs.symlinkSync('loop1', path.join(ws, 'loop2'));
  refused(() => resolve(vfs, 'loop1'), /too many levels of symbolic links/);
});

test('error messages name sandbox paths only, never the host path', (t) => {
  const { vfs, ws, root } = setup(t);
  fs.writeFileSync(path.join(ws, 'file'), 'x');
  const messages: string[] = [];
  for (const [input, o] of [['missing/x', {}], ['file/below', {}], ['file/below', { write: true, parents: true }], ['sub', { write: true }], ['nope.txt', { modify: true }]] as const) {
    try {
      vfs.open(input, o).close();
      assert.fail(`${input} should not open`);
    } catch (e) {
      messages.push((e as Error).message);
    }
  }
  assert.match(messages[0]!, /^\/workspace\/missing: no such file or directory$/);
  assert.match(messages[1]!, /^\/workspace\/file: not a directory$/);
  assert.match(messages[3]!, /^\/workspace\/sub: is a directory$/);
  assert.match(messages[4]!, /^\/workspace\/nope\.txt: no such file or directory$/);
  for (const m of messages) assert.ok(!m.includes(root) && !m.includes(fs.realpathSync(root)), `host path leaked: ${m}`);
});

test('a mount below another is what the sandbox shows there, for open and for walks', async (t) => {
  const { ws, rt, root } = setup(t);
  const data = path.join(root, 'data');
  fs.mkdirSync(data);
  fs.writeFileSync(path.join(data, 'd.txt'), 'mounted');
  fs.mkdirSync(path.join(ws, 'data'));
  fs.writeFileSync(path.join(ws, 'data', 'hidden.txt'), 'under the mount');
  const vfs = new VirtualFs([
    { target: '/workspace', host: ws, writable: true },
    { target: '/workspace/data', host: data, writable: false },
    { target: '/runtime', host: rt, writable: false },
  ]);
  assert.equal(read(vfs, '/workspace/data/d.txt'), 'mounted');
  refused(() => vfs.open('/workspace/data/new.txt', { write: true }), /\/workspace\/data is read-only/);
  const seen: string[] = [];
  const h = vfs.open('/workspace');
  try {
    await vfs.walk(h, (e) => (seen.push(e.virtual), true), { maxEntries: 100 });
  } finally {
    h.close();
  }
  assert.ok(seen.includes('/workspace/data/d.txt'), seen.join(', '));
  assert.ok(!seen.includes('/workspace/data/hidden.txt'), seen.join(', '));
});

/**
 * The race the file tools must not lose: another process (the agent's shell)
 * swaps a directory of the workspace with a symlink to a host directory, in a
 * loop, while the tools read and write below it. A check-then-open resolver
 * reads the host file and writes into the host directory within a few
 * hundred tries; a walk of descriptors never does.
 */
test('a directory swapped with a symlink in a loop never leads the tools outside', async (t) => {
  const { vfs, ws, root } = setup(t);
  const outside = path.join(root, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'f'), 'HOST-SECRET');
  fs.mkdirSync(path.join(ws, 'd'));
  fs.writeFileSync(path.join(ws, 'd', 'f'), 'inside');
  fs.symlinkSync(outside, path.join(ws, 'L')); // the host path, as an agent that read /proc/self/mountinfo would write it
  const racer = spawn(
    process.execPath,
    ['-e', `const fs=require('fs');process.chdir(process.argv[1]);process.stdout.write('ready\\n');for(;;){try{fs.renameSync('d','t');fs.renameSync('L','d');fs.renameSync('d','L');fs.renameSync('t','d')}catch{}}`, ws],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => racer.kill('SIGKILL'));
  await once(racer.stdout!, 'data');
  let escapes = 0;
  let inside = 0;
  let refusedOrMissing = 0;
  // Until both states were seen many times (the racer really raced), bounded.
  for (let i = 0; i < 200_000 && (inside < 300 || refusedOrMissing < 300 || i < 2000); i++) {
    try {
      const text = read(vfs, '/workspace/d/f');
      if (text === 'HOST-SECRET') escapes++;
      else inside++;
    } catch {
      refusedOrMissing++;
    }
    try {
      const h = vfs.open(`/workspace/d/w${i % 50}`, { write: true });
      fs.writeSync(h.fd, 'x');
      h.close();
    } catch {
      // refused or raced away: fine
    }
  }
  racer.kill('SIGKILL');
  assert.equal(escapes, 0, 'a read returned the host file');
  assert.deepEqual(fs.readdirSync(outside), ['f'], 'a write landed outside the workspace');
  assert.ok(inside >= 300 && refusedOrMissing >= 300, `the race was not exercised (inside ${inside}, refused ${refusedOrMissing})`);
});

test('hideHostPaths: the forms mountinfo prints, escaped (a home with a space) and as given', (t) => {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'my home', 'ws');
  fs.mkdirSync(ws, { recursive: true });
  const vfs = new VirtualFs([{ target: '/workspace', host: ws, writable: true }], { hideHostPaths: true });
  const escaped = mountinfoEscape(fs.realpathSync(ws));
  assert.match(escaped, /my\\040home/);
  const line = `65 42 0:40 ${escaped} /workspace rw,relatime - ext4 /dev/sda1 rw`;
  assert.equal(vfs.hideHostPaths(line), '65 42 0:40 /workspace /workspace rw,relatime - ext4 /dev/sda1 rw');
  assert.equal(vfs.hideHostPaths(`cannot open ${ws}/a.txt`), 'cannot open /workspace/a.txt');
  assert.equal(vfs.hideHostPaths(`${ws}2/other`), `${ws}2/other`, 'only at a path boundary');
  const plain = new VirtualFs([{ target: '/workspace', host: ws, writable: true }]);
  assert.equal(plain.hideHostPaths(`${ws}/a`), `${ws}/a`, 'unconfined: host paths are the real ones of the shell');
});

test('a path that expands, through its links, past what the kernel would walk is refused', (t) => {
  const { vfs, ws } = setup(t);
  fs.mkdirSync(path.join(ws, 'd'));
  fs.writeFileSync(path.join(ws, 'd', 'x'), 'x');
  // 40 links of 2,000 components each: 80,000 steps, each of which could hold a descriptor
  fs.symlinkSync(`${'./'.repeat(2000)}d`, path.join(ws, 'l1'));
  for (let i = 2; i <= 3; i++) fs.symlinkSync(`${'./'.repeat(2000)}l${i - 1}`, path.join(ws, `l${i}`));
  refused(() => vfs.open('/workspace/l3/x'), /the path, with its links followed, is too long/);
  assert.equal(read(vfs, '/workspace/l1/x'), 'x', 'a long but reasonable path still opens');
});
