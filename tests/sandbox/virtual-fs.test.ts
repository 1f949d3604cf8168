import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { VirtualFs, PathError } from '../../src/core/sandbox/virtual-fs.js';
import { tempHome } from '../helpers/home.js';

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

const refused = (fn: () => unknown, re: RegExp) => assert.throws(fn, (e: unknown) => e instanceof PathError && re.test((e as Error).message));

test('relative and absolute paths map into the workspace; /runtime is readable', (t) => {
  const { vfs, ws, rt } = setup(t);
  assert.equal(vfs.resolve('a.txt').host, path.join(fs.realpathSync(ws), 'a.txt'));
  assert.equal(vfs.resolve('/workspace/sub/../a.txt').virtual, '/workspace/a.txt');
  assert.equal(vfs.resolve('/runtime/shell.json').host, path.join(fs.realpathSync(rt), 'shell.json'));
  assert.equal(vfs.resolve('new/dir/file.txt', { write: true }).virtual, '/workspace/new/dir/file.txt');
});

test('escapes by .. and by absolute path are refused', (t) => {
  const { vfs } = setup(t);
  refused(() => vfs.resolve('../secret.txt'), /outside the workspace/);
  refused(() => vfs.resolve('/workspace/../../etc/passwd'), /outside the workspace/);
  refused(() => vfs.resolve('/etc/passwd'), /outside the workspace/);
  refused(() => vfs.resolve('sub/../../x', { write: true }), /outside the workspace/);
});

test('a symlinked file pointing outside is refused; one pointing inside is followed', (t) => {
  const { vfs, ws, secret } = setup(t);
  fs.symlinkSync(secret, path.join(ws, 'leak.txt'));
  refused(() => vfs.resolve('/workspace/leak.txt'), /outside the workspace/);
  refused(() => vfs.resolve('/workspace/leak.txt', { write: true }), /outside the workspace/);
  fs.symlinkSync('a.txt', path.join(ws, 'alias.txt'));
  assert.equal(vfs.resolve('alias.txt').virtual, '/workspace/a.txt');
});

test('a symlinked directory pointing outside is refused, also for new files below it', (t) => {
  const { vfs, ws, root } = setup(t);
  fs.symlinkSync(root, path.join(ws, 'up'));
  refused(() => vfs.resolve('/workspace/up/secret.txt'), /outside the workspace/);
  refused(() => vfs.resolve('/workspace/up/newfile', { write: true }), /outside the workspace/);
  fs.symlinkSync('/', path.join(ws, 'rootlink'));
  refused(() => vfs.resolve('/workspace/rootlink/etc/passwd'), /outside the workspace/);
});

test('absolute link targets are sandbox paths: /workspace/x means the session workspace', (t) => {
  const { vfs, ws } = setup(t);
  fs.symlinkSync('/workspace/a.txt', path.join(ws, 'sandboxlink'));
  assert.equal(vfs.resolve('sandboxlink').host, path.join(fs.realpathSync(ws), 'a.txt'));
  fs.symlinkSync('/runtime/shell.json', path.join(ws, 'rtlink'));
  assert.equal(vfs.resolve('rtlink').virtual, '/runtime/shell.json');
  refused(() => vfs.resolve('rtlink', { write: true }), /\/runtime is read-only/);
});

test('writes to read-only mounts and symlink loops are refused', (t) => {
  const { vfs, ws } = setup(t);
  refused(() => vfs.resolve('/runtime/shell.json', { write: true }), /read-only/);
  fs.symlinkSync('loop2', path.join(ws, 'loop1'));
  fs.symlinkSync('loop1', path.join(ws, 'loop2'));
  refused(() => vfs.resolve('loop1'), /too many levels of symbolic links/);
});
