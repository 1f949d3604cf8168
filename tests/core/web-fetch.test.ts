/**
 * web_fetch under the environment's network rules: the same allow list and
 * address checks as the egress proxy. Servers on 127.0.0.1 stand in for the
 * internet; names resolve from a table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { egressAccess } from '../../src/core/egress/egress-access.js';
import { EnvironmentDefinition } from '../../src/core/schema/index.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { tableNetwork } from '../helpers/deps.js';
import { toolRunner } from '../helpers/tools.js';
import { site } from '../helpers/web-site.js';
import { ManualClock } from '../helpers/clock.js';
import { readable, webFetch } from '../../src/core/egress/web-fetch.js';

function runner(t: import('node:test').TestContext, env: Record<string, unknown>, table: Record<string, string>, ownPorts: number[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-fetch-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const network = tableNetwork(table);
  for (const p of ownPorts) network.ownPorts.add(p);
  const egress = egressAccess({ def: EnvironmentDefinition.parse(env), mcpServers: [], network, runtimeDir: dir, redactor: Redactor.none });
  const log = () => fs.readFileSync(path.join(dir, 'egress.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { via: string; host: string; allowed: boolean });
  return { tools: toolRunner(new MemorySandbox(), { egress }), log };
}

test('web_fetch: an allowed page comes back as Markdown with its final URL and status, after an allowed redirect', async (t) => {
  const port = await site(t, 'The Title');
  const { tools, log } = runner(t, { network: 'limited', allowed_hosts: [`docs.test:${port}`, '127.0.0.1'] }, { 'docs.test': '127.0.0.1' });
  const r = await tools.run('web_fetch', { url: `http://docs.test:${port}/redirect-in` });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.text, `URL: http://docs.test:${port}/article\n(redirected from http://docs.test:${port}/redirect-in)\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\n\nT\n\n# The Title\n\nSome [link](/x) text.`);
  assert.deepEqual(log().map((l) => [l.via, l.host, l.allowed]), [
    ['web_fetch', 'docs.test', true],
    ['web_fetch', 'docs.test', true],
  ]);
});

test('web_fetch: a redirect to an unlisted host, a listed name on a private address, an unlisted host and the daemon port are refused', async (t) => {
  const port = await site(t);
  const { tools } = runner(t, { network: 'limited', allowed_hosts: [`docs.test:${port}`, `meta.test`, '127.0.0.1'] }, { 'docs.test': '127.0.0.1', 'meta.test': '169.254.169.254', 'unlisted.test': '127.0.0.1' }, [port + 0]);
  const out = await tools.run('web_fetch', { url: `http://docs.test:${port}/redirect-out` });
  assert.equal(out.isError, true);
  assert.match(out.text, /daemon's own ports/);
  const { tools: t2 } = runner(t, { network: 'limited', allowed_hosts: [`docs.test:${port}`, `meta.test`, '127.0.0.1'] }, { 'docs.test': '127.0.0.1', 'meta.test': '169.254.169.254', 'unlisted.test': '127.0.0.1' });
  const redirect = await t2.run('web_fetch', { url: `http://docs.test:${port}/redirect-out` });
  assert.equal(redirect.text, "web_fetch: the redirect to http://unlisted.test/ was refused: unlisted.test is not in this environment's allowed_hosts");
  const meta = await t2.run('web_fetch', { url: 'http://meta.test/latest/meta-data/' });
  assert.match(meta.text, /^web_fetch: refused http:\/\/meta\.test\/latest\/meta-data\/: meta\.test resolves to 169\.254\.169\.254 is a link-local address/);
  const other = await t2.run('web_fetch', { url: 'https://elsewhere.test/' });
  assert.match(other.text, /elsewhere\.test is not in this environment's allowed_hosts/);
  const creds = await t2.run('web_fetch', { url: `http://user:pw@docs.test:${port}/` });
  assert.match(creds.text, /credentials/);
  const file = await t2.run('web_fetch', { url: 'file:///etc/passwd' });
  assert.match(file.text, /only http:\/\/ and https:\/\/ URLs/);
});

test('web_fetch: network none reaches nothing', async (t) => {
  const port = await site(t);
  const { tools } = runner(t, { network: 'none' }, { 'docs.test': '127.0.0.1' });
  const r = await tools.run('web_fetch', { url: `http://docs.test:${port}/` });
  assert.match(r.text, /network is none: web_fetch reaches nothing/);
});

test('web_fetch: a body past the size cap is cut and said so; binary content is named, not shown', async (t) => {
  const port = await site(t, 'a long page');
  const egress = egressAccess({ def: EnvironmentDefinition.parse({ network: 'limited', allowed_hosts: [`docs.test:${port}`, '127.0.0.1'] }), mcpServers: [], network: tableNetwork({ 'docs.test': '127.0.0.1' }), runtimeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'web-fetch-')), redactor: Redactor.none });
  const r = await webFetch(`http://docs.test:${port}/abc`, egress, { clock: new ManualClock(), signal: new AbortController().signal, limits: { maxBytes: 6 } });
  assert.ok(r.ok);
  assert.deepEqual([r.text, r.truncated, r.bytes], ['a long', true, 6]);
  const signal = new AbortController().signal;
  assert.equal(await readable(Buffer.from([0, 1, 2]), 'image/png', signal), '(image/png content, 3 bytes: not text, not shown)');
  assert.equal(await readable(Buffer.from('{"a":1}'), 'application/json', signal), '{"a":1}');
});

test('web_fetch: a page nested deeper than turndown can take comes back as its HTML, said so, not as an exception on the daemon thread', async (t) => {
  const port = await site(t);
  const egress = egressAccess({ def: EnvironmentDefinition.parse({ network: 'limited', allowed_hosts: [`docs.test:${port}`, '127.0.0.1'] }), mcpServers: [], network: tableNetwork({ 'docs.test': '127.0.0.1' }), runtimeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'web-fetch-')), redactor: Redactor.none });
  const r = await webFetch(`http://docs.test:${port}/deep`, egress, { clock: new ManualClock(), signal: new AbortController().signal });
  assert.ok(r.ok);
  assert.match(r.text, /^\(this HTML could not be turned into Markdown: Maximum call stack size exceeded; it follows as it came\)\n\n<div><div>/);
});
