import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../helpers/cli.js';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';

const ASK_WRITE = { tools: { write: { permission: 'always_ask' } } };

test('a paused session with the daemon: status shows what it waits for; confirm and tool-result answer it', async (t) => {
  const b = await bench(t, {
    agent: { ...ASK_WRITE, custom_tools: [{ name: 'approve_budget', description: 'Ask finance', input_schema: { type: 'object' } }] },
    steps: [
      { toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'report.md', content: 'numbers' } }, { id: 'toolu_c', name: 'approve_budget', input: { amount: 5 } }] },
      { text: 'Report written and budget approved.' },
    ],
  });
  const id = b.session('write the report and get the budget approved');
  const td = await startDaemon(t, b);
  const paused = await td.result((r) => r.session_id === id && r.stop_reason?.type === 'requires_action');
  const [ask, custom] = paused.stop_reason?.type === 'requires_action' ? paused.stop_reason.event_ids : [];
  const st = await cliInProcess(['status', id], { home: b.h.root });
  assert.match(st.stdout, /waiting on 2 answer\(s\):/);
  assert.match(st.stdout, new RegExp(`${ask}  write: openboa confirm ${id} ${ask} --allow\\|--deny`));
  assert.match(st.stdout, new RegExp(`${custom}  approve_budget: openboa tool-result ${id} ${custom} <text>`));
  // Short forms: the session by the digits the daemon prints, the tool use by a unique part of its id.
  let shared = 0;
  while (ask![shared] === custom![shared]) shared++;
  const amb = await cliInProcess(['confirm', id.slice(-8), ask!.slice(0, shared), '--allow'], { home: b.h.root });
  assert.equal(amb.code, 2, amb.stderr);
  assert.match(amb.stderr, new RegExp(`event id "${ask!.slice(0, shared)}" is ambiguous: it matches 2: `));
  const c1 = await cliInProcess(['confirm', id.slice(-8), ask!.slice(-10), '--allow'], { home: b.h.root });
  assert.equal(c1.code, 0, c1.stderr);
  await td.result((r) => r.session_id === id && r.stop_reason?.type === 'requires_action' && r.stop_reason.event_ids.length === 1);
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'report.md'), 'utf8'), 'numbers');
  const c2 = await cliInProcess(['tool-result', id, custom!.slice(0, shared + 2), 'approved: 5 EUR'], { home: b.h.root });
  assert.equal(c2.code, 0, c2.stderr);
  const done = await td.result((r) => r.session_id === id && r.stop_reason?.type === 'end_turn');
  assert.equal(done.status, 'idle');
  assert.match(JSON.stringify(b.fake.requests[1]!.body.messages), /approved: 5 EUR/);
});

test('confirm, tool-result and interrupt check what they answer; mistakes are exit 2 with one clear line', async (t) => {
  const b = await bench(t, { agent: ASK_WRITE, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }] });
  const id = b.session('go');
  await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.tool_use')!.id;
  const created = b.events(id)[0]!.id;
  const cases: Array<[string[], number, RegExp]> = [
    [['confirm', id, use], 2, /give exactly one of --allow or --deny/],
    [['confirm', id, use, '--allow', '--deny'], 2, /give exactly one of --allow or --deny/],
    [['confirm', id, use, '--allow', '--message', 'x'], 2, /--message goes with a deny only/],
    [['confirm', id, 'sevt_nope', '--allow'], 2, /has no event sevt_nope/],
    [['confirm', id, created, '--deny'], 2, /is a session\.created/],
    [['tool-result', id, use, 'text'], 2, /is a built-in tool use \(write\)/],
    [['confirm', '019a0000-0000-7000-8000-000000000000', use, '--allow'], 3, /not found/],
    [['interrupt', '019a0000-0000-7000-8000-000000000000'], 3, /not found/],
    [['session', 'update', id], 2, /nothing to change/],
    [['session', 'update', id, '--budget', 'lots'], 2, /--budget "lots" is not a whole number/],
  ];
  for (const [args, code, re] of cases) {
    const r = await cliInProcess(args, { home: b.h.root });
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
  const ok = await cliInProcess(['confirm', id, use, '--deny', '--message', 'no thanks', '--json'], { home: b.h.root });
  assert.equal(ok.code, 0);
  const again = await cliInProcess(['confirm', id, use, '--allow'], { home: b.h.root });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already answered by/);
  const conf = b.events(id).find((e) => e.type === 'user.tool_confirmation');
  assert.deepEqual(conf?.type === 'user.tool_confirmation' && [conf.result, conf.deny_message, conf.id], ['deny', 'no thanks', JSON.parse(ok.stdout).id]);
  const intr = await cliInProcess(['interrupt', id, '--reason', 'enough'], { home: b.h.root });
  assert.equal(intr.code, 0);
  const ie = b.events(id).find((e) => e.type === 'user.interrupt');
  assert.equal(ie?.type === 'user.interrupt' && ie.reason, 'enough');
  const up = await cliInProcess(['session', 'update', id, '--budget', '5000', '--title', 'renamed'], { home: b.h.root });
  assert.equal(up.code, 0, up.stderr);
  const snap = b.store.snapshot(id);
  assert.equal(snap.overrides.session_token_budget, 5000);
  assert.equal(snap.title, 'renamed');
});
