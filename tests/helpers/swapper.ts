/**
 * A hostile shell's loop, as a separate process: swaps two names in a
 * folder (a directory and a symlink) as fast as it can, with
 * renameat2(RENAME_EXCHANGE) through python3's ctypes where that works, else
 * with plain renames (node, three a swap). It stops after `seconds` or on
 * stop(); when it stops by itself it first creates `done`, so a test can
 * tell, from a callback that ran, whether the loop was still going: a
 * callback held up until the swapping ended finds `done` there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';

const PY = String.raw`
import ctypes, os, signal, sys, time
d, a, b, secs, done = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode(), float(sys.argv[4]), sys.argv[5]
os.chdir(d)
libc = ctypes.CDLL(None, use_errno=True)
ex = libc.renameat2
ex.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
if ex(-100, a, -100, b, 2) != 0:
    sys.exit(3)
print('renameat2', flush=True)
end = time.monotonic() + secs
n = 0
while True:
    for _ in range(1000):
        ex(-100, a, -100, b, 2)
    n += 1000
    if time.monotonic() > end:
        break
open(done, 'w').close()
print(n, flush=True)
`;

const NODE = String.raw`
const fs = require('node:fs');
const [d, a, b, secs, done] = process.argv.slice(1);
process.chdir(d);
const t = a + '.swap-tmp';
const swap = () => { try { fs.renameSync(a, t); fs.renameSync(b, a); fs.renameSync(t, b); } catch {} };
swap();
console.log('rename');
const end = Date.now() + Number(secs) * 1000;
let n = 0;
while (Date.now() < end) { for (let i = 0; i < 1000; i++) swap(); n += 1000; }
fs.closeSync(fs.openSync(done, 'w'));
console.log(n);
`;

export interface Swapper {
  /** renameat2 or rename. */
  mode: string;
  /** Created by the swapper when it stopped by itself (its time was up). */
  done: string;
  /** Stops it (SIGKILL) and resolves once it has exited. */
  stop(): Promise<void>;
}

function run(cmd: string, args: string[]): Promise<{ child: ChildProcess; mode: string } | null> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.on('error', () => resolve(null));
    child.on('exit', () => resolve(null));
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ child, mode: out.split('\n')[0] as string });
    });
  });
}

/** Starts swapping `a` and `b` in `dir`; resolves once the first swap is done. */
export async function startSwapper(dir: string, a: string, b: string, o: { seconds: number; done: string }): Promise<Swapper> {
  fs.mkdirSync(path.dirname(o.done), { recursive: true });
  const args = [dir, a, b, String(o.seconds), o.done];
  const got = (await run('python3', ['-c', PY, ...args])) ?? (await run(process.execPath, ['-e', NODE, ...args]));
  if (!got) throw new Error(`the swapper did not start in ${dir}`);
  const exited = new Promise<void>((resolve) => (got.child.exitCode !== null ? resolve() : got.child.on('exit', () => resolve())));
  return {
    mode: got.mode,
    done: o.done,
    async stop() {
      got.child.kill('SIGKILL');
      await exited;
    },
  };
}
