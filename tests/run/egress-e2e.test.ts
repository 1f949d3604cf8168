/**
 * network: limited end to end: a run of the real sandbox (bubblewrap) whose
 * shell reaches the stand-in internet (servers on 127.0.0.1) only through
 * the run's egress proxy; names resolve through a table, never the DNS.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, BWRAP, toolResults } from '../helpers/run.js';
import { tableNetwork } from '../helpers/deps.js';
import { site } from '../helpers/web-site.js';

const skip = BWRAP ? false : 'needs bubblewrap (the proxy is reached through a socket bound into the sandbox)';

test('limited: the shell reaches an allowed host with curl, web_fetch too; rebinding, unlisted hosts and the daemon port are refused with reasons it reads', { skip }, async (t) => {
  const port = await site(t);
  const daemonPort = await site(t, 'daemon API');
  const curl = (url: string) => `curl -sS --max-time 10 ${url}; echo " [exit $?]"`;
  const b = await bench(t, {
    steps: [
      {
        toolUses: [
          { id: 'toolu_ok', name: 'bash', input: { command: curl(`http://allowed.test:${port}/page`) } },
          { id: 'toolu_tunnel', name: 'bash', input: { command: `curl -sS -p --max-time 10 http://allowed.test:${port}/tunnel; echo " [exit $?]"` } },
          { id: 'toolu_rebind', name: 'bash', input: { command: curl(`http://rebind.test:${port}/`) } },
          { id: 'toolu_meta', name: 'bash', input: { command: curl('http://metadata.test/latest/meta-data/') } },
          { id: 'toolu_unlisted', name: 'bash', input: { command: curl(`http://elsewhere.test:${port}/`) } },
          { id: 'toolu_daemon', name: 'bash', input: { command: curl(`http://allowed.test:${daemonPort}/`) } },
          { id: 'toolu_fetch', name: 'web_fetch', input: { url: `http://allowed.test:${port}/article` } },
          { id: 'toolu_direct', name: 'bash', input: { command: `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${port}/; echo " [exit $?]"` } },
        ],
      },
      { text: 'done' },
    ],
    agent: { environment: 'limited' },
  });
  b.h.write('environments/limited.yaml', `network: limited\nallowed_hosts:\n  - "allowed.test:${port}"\n  - "allowed.test:${daemonPort}"\n  - "rebind.test:${port}"\n  - metadata.test\n  - "127.0.0.1"\n`);
  // rebind.test is listed, but 127.0.0.1 is listed too: so it stands for a name resolving to the metadata address instead.
  b.deps.network = tableNetwork({ 'allowed.test': '127.0.0.1', 'rebind.test': '169.254.169.254', 'metadata.test': '169.254.169.254', 'elsewhere.test': '127.0.0.1' });
  b.deps.network.ownPorts.add(daemonPort);
  const id = b.session('fetch things');
  await b.wake(id);
  const r = toolResults(b.fake.requests[1]!);
  assert.match(r.get('toolu_ok')!.text, /^hello from the site \/page \[exit 0\]/);
  assert.match(r.get('toolu_tunnel')!.text, /^hello from the site \/tunnel \[exit 0\]/);
  assert.match(r.get('toolu_rebind')!.text, /refused rebind\.test:\d+: rebind\.test resolves to 169\.254\.169\.254 is a link-local address/);
  assert.match(r.get('toolu_meta')!.text, /refused metadata\.test:80: .*link-local/);
  assert.match(r.get('toolu_unlisted')!.text, /refused elsewhere\.test:\d+: elsewhere\.test is not in this environment's allowed_hosts/);
  assert.match(r.get('toolu_daemon')!.text, /one of the daemon's own ports/);
  assert.doesNotMatch(r.get('toolu_daemon')!.text, /daemon API/);
  assert.match(r.get('toolu_fetch')!.text, new RegExp(`^URL: http://allowed\\.test:${port}/article\nStatus: 200 OK\n[^]*# hello from the site`));
  // Past the proxy there is no network at all: the sandbox's own loopback has nothing on that port.
  assert.match(r.get('toolu_direct')!.text, /Failed to connect|Couldn't connect/);
  const log = fs.readFileSync(path.join(b.store.paths(id).runtime, 'egress.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { host: string; allowed: boolean });
  // A tunnel's line is written when the tunnel closes, which may come after the next command's refusal: the set is the contract, not the order.
  const byKey = (a: [string, boolean], b: [string, boolean]) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`);
  const seen: Array<[string, boolean]> = log.map((l) => [l.host, l.allowed]);
  const expected: Array<[string, boolean]> = [
    ['allowed.test', true],
    ['allowed.test', true],
    ['rebind.test', false],
    ['metadata.test', false],
    ['elsewhere.test', false],
    ['allowed.test', false],
    ['allowed.test', true],
  ];
  assert.deepEqual(seen.sort(byKey), expected.sort(byKey));
  const net = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'network.json'), 'utf8')) as { network: string };
  assert.equal(net.network, 'limited');
});

test('network: none reaches nothing: no proxy, no loopback of the host', { skip }, async (t) => {
  const port = await site(t);
  const b = await bench(t, {
    steps: [{ toolUses: [{ id: 'toolu_none', name: 'bash', input: { command: `env | grep -ci proxy; curl -sS --max-time 5 http://127.0.0.1:${port}/; echo " [exit $?]"` } }] }, { text: 'done' }],
  });
  const id = b.session('try');
  await b.wake(id);
  const out = toolResults(b.fake.requests[1]!).get('toolu_none')!.text;
  assert.match(out, /^0\n/);
  assert.match(out, /Failed to connect|Couldn't connect/);
  assert.doesNotMatch(out, /hello from the site/);
});
