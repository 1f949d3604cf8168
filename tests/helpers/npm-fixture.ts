/**
 * The npm package of tests/fixtures/npm-hello (one bin script,
 * `openboa-hello`), packed by `npm pack` into a temp folder, and a registry
 * on 127.0.0.1 that serves it and can hold its answers back (to catch a
 * build in the middle). Nothing leaves the machine.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { REPO } from './home.js';

export const HELLO_FIXTURE = path.join(REPO, 'tests', 'fixtures', 'npm-hello');

/** `npm pack` of the fixture into a temp folder (removed after the test): the tarball's path. */
export function packHello(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-pack-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync('npm', ['pack', HELLO_FIXTURE, '--pack-destination', dir, '--silent'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
  return path.join(dir, 'openboa-hello-1.0.0.tgz');
}

export interface TestRegistry {
  url: string;
  /** Resolves when `n` requests (in all) have arrived while answers are held back. */
  held(n?: number): Promise<void>;
  /** Answers every held request and every later one. */
  release(): void;
}

/** A registry serving openboa-hello@1.0.0; with `hold`, it answers nothing until release(). */
export async function helloRegistry(t: TestContext, tarball: string, o: { hold: boolean }): Promise<TestRegistry> {
  const tgz = fs.readFileSync(tarball);
  let holding = o.hold;
  const waiting: Array<() => void> = [];
  let count = 0;
  const watchers: Array<{ n: number; done: () => void }> = [];
  const server = http.createServer((req, res) => {
    const answer = () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.url?.endsWith('.tgz')) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tgz);
      const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
      const version = { name: 'openboa-hello', version: '1.0.0', bin: { 'openboa-hello': 'bin/openboa-hello.js' }, dist: { tarball: `${url}/openboa-hello/-/openboa-hello-1.0.0.tgz`, integrity } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'openboa-hello', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': version } }));
    };
    if (!holding) return answer();
    waiting.push(answer);
    count += 1;
    for (const w of watchers.filter((x) => count >= x.n)) w.done();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    held: (n = 1) => new Promise<void>((done) => (count >= n ? done() : watchers.push({ n, done }))),
    release() {
      holding = false;
      for (const a of waiting.splice(0)) a();
    },
  };
}
