/**
 * The promote tool in-process (docs/memory.md, "Promotion"): the real store,
 * loop and outcome fold on a temp home, the memory sandbox as /workspace,
 * the real substrate directory, log and store on disk.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { defineOutcome } from '../../src/core/ops/session-ops.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { readContent, readVersions, sha256Of, substrateVersioned } from '../../src/core/memory/version-store.js';
import { PROMOTE_MESSAGE_MAX, promoteTool, substrateQuotaRefusal } from '../../src/core/tools/promote-tool.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { unitRun } from '../helpers/unit-run.js';

function setup(t: TestContext, o: { redactor?: Redactor } = {}) {
  let checkPasses = false;
  const sandbox = new MemorySandbox({ files: { '/workspace/plan.md': 'the plan', '/workspace/sub/tool.sh': 'echo hi' }, exec: () => (checkPasses ? 'ok' : { output: 'not yet', exitCode: 1 }) });
  const u = unitRun(t, { agents: { unit: { tools: { promote: { permission: 'always_allow' } } } }, replies: [{ text: 'done' }, { text: 'done again' }], sandbox: () => sandbox });
  const id = u.newSession();
  const sub = substrateVersioned(u.h.home, 'unit');
  fs.mkdirSync(sub.dir, { recursive: true });
  const ctx = (): ToolContext =>
    ({
      sessionId: id,
      wakeId: 'wrun_test',
      toolUseId: 'sevt_test',
      clock: u.deps.clock,
      store: u.store,
      sandbox,
      redactor: o.redactor ?? Redactor.none,
      skills: [],
      shellTimeoutMs: 1000,
      outputLimitChars: 100_000,
      signal: new AbortController().signal,
      agent: loadAgent(u.h.home, 'unit'),
    }) as ToolContext;
  const promote = (paths: string[], message = 'reviewed') => promoteTool.run({ paths, message }, ctx());
  return { u, id, sub, promote, pass: (p: boolean) => (checkPasses = p) };
}

test('promote is refused after the most recent outcome ended other than satisfied, and allowed once a new one is satisfied', async (t) => {
  const s = setup(t);
  defineOutcome(s.u.store, s.id, { description: 'a plan', check: 'test -f plan.md', maxIterations: 1 });
  await s.u.run(s.id);
  assert.deepEqual(s.u.store.snapshot(s.id).outcome_evaluations.map((e) => e.result), ['max_iterations_reached']);
  const refused = await s.promote(['plan.md']);
  assert.equal(refused.isError, true);
  assert.match(refused.text, /^promote is refused: this session's most recent outcome outc_\S+ ended max_iterations_reached, not satisfied; .*Nothing was promoted\.$/);
  assert.deepEqual(fs.readdirSync(s.sub.dir), []);
  assert.equal(fs.existsSync(s.sub.log), false);

  s.pass(true);
  defineOutcome(s.u.store, s.id, { description: 'the plan, again', check: 'test -f plan.md' });
  await s.u.run(s.id);
  assert.deepEqual(s.u.store.snapshot(s.id).outcome_evaluations.map((e) => e.result), ['max_iterations_reached', 'satisfied']);
  const done = await s.promote(['plan.md']);
  assert.equal(done.isError, false, done.text);
  assert.match(done.text, new RegExp(`/substrate/plan\\.md \\(8 bytes, sha256 ${sha256Of(Buffer.from('the plan'))}\\)`), 'the result names the size and the whole sha256');
  assert.equal(fs.readFileSync(path.join(s.sub.dir, 'plan.md'), 'utf8'), 'the plan');
});

test('a message that redaction makes longer than a log line holds is cut, and the file and its line are both there', async (t) => {
  const s = setup(t, { redactor: new Redactor({ A_VERY_LONG_SECRET_NAME: 'k9' }) });
  const message = `why: ${'k9 '.repeat(1300)}`; // 3,905 characters; each "k9" becomes "[REDACTED:A_VERY_LONG_SECRET_NAME]"
  const r = await s.promote(['plan.md', 'sub/tool.sh'], message);
  assert.equal(r.isError, false, r.text);
  const lines = readVersions(s.sub).lines.map((l) => l.line);
  assert.deepEqual(lines.map((l) => [l.op, l.path]), [['promote', 'plan.md'], ['promote', 'sub/tool.sh']]);
  for (const l of lines) {
    assert.equal(l.message!.length, PROMOTE_MESSAGE_MAX);
    assert.ok(l.message!.startsWith('why: [REDACTED:A_VERY_LONG_SECRET_NAME] ') && l.message!.endsWith('…') && !l.message!.includes('k9'));
  }
  assert.equal(readContent(s.sub, lines[1]!.sha256!)?.toString(), 'echo hi');
  assert.equal(fs.readFileSync(path.join(s.sub.dir, 'sub', 'tool.sh'), 'utf8'), 'echo hi');
});

test('a log that cannot be appended to promotes nothing: /substrate never holds a file its log does not explain', async (t) => {
  const s = setup(t);
  fs.mkdirSync(s.sub.log, { recursive: true }); // reading or appending to a directory fails (EISDIR)
  const r = await s.promote(['plan.md', 'sub/tool.sh']);
  assert.equal(r.isError, true);
  // The quota is counted from the log first, so the call stops there, before anything is stored.
  assert.match(r.text, /^Nothing was promoted: the substrate's log could not be read: EISDIR/);
  assert.equal(fs.existsSync(s.sub.store), false);
  assert.deepEqual(fs.readdirSync(s.sub.dir), [], 'nothing renamed into /substrate');
  // A store that cannot be written: nothing is logged or renamed either.
  fs.rmdirSync(s.sub.log);
  fs.writeFileSync(s.sub.store, 'not a directory');
  const r2 = await s.promote(['plan.md']);
  assert.equal(r2.isError, true);
  assert.match(r2.text, /^Nothing was promoted: \/workspace\/plan\.md could not be stored: /);
  assert.deepEqual(fs.readdirSync(s.sub.dir), []);
  assert.equal(fs.existsSync(s.sub.log), false);
});

test("a promote that would take the substrate's store past its quota promotes nothing; a content already stored does not count again", async (t) => {
  const s = setup(t);
  assert.equal((await s.promote(['plan.md'])).isError, false);
  const quota = { bytes: 'the plan'.length + 3, contents: 5 };
  // 'echo hi' is 7 new bytes: 8 + 7 > 11.
  const files = [{ data: Buffer.from('echo hi') }];
  assert.match(substrateQuotaRefusal(s.sub, files, quota) ?? '', /^Nothing was promoted: the substrate's store holds 8 bytes in 1 contents, and this promote would take it to 15 bytes in 2 \(at most 11 bytes and 5 contents\)\.$/);
  // The same content as stored before (under another name) adds nothing.
  assert.equal(substrateQuotaRefusal(s.sub, [{ data: Buffer.from('the plan') }], quota), null);
  assert.match(substrateQuotaRefusal(s.sub, files, { bytes: 1_000, contents: 1 }) ?? '', /would take it to 15 bytes in 2 \(at most 1000 bytes and 1 contents\)/);
  // Under the real quota the call goes through, and the tool runs the same check.
  assert.equal(substrateQuotaRefusal(s.sub, files), null);
  assert.equal((await s.promote(['sub/tool.sh'])).isError, false);
});
