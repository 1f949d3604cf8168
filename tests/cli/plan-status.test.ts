/**
 * `openboa status` shows the agent's plan (runtime/plan.json, its last
 * `todo` call): a summary line and each step with its mark; `--json` has it
 * as `plan` (null without one). A step's text reaches the terminal as text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { unitRun } from '../helpers/unit-run.js';
import { cliInProcess } from '../helpers/cli.js';

test('status shows the plan: a summary, each step with its mark; --json has it as plan', async (t) => {
  const items = [
    { content: 'Read the spec', status: 'done' },
    { content: 'Write the code\u001b[2J', status: 'in_progress' },
    { content: 'Test it', status: 'pending' },
  ];
  const u = unitRun(t, { replies: [{ tools: [{ name: 'todo', input: { items } }] }, { text: 'On it.' }] });
  const id = u.newSession();
  const bare = u.newSession();
  sendMessage(u.store, id, 'build it');
  await u.run(id);
  const at = u.events(id).find((e) => e.type === 'agent.tool_result')!.created_at;

  const out = await cliInProcess(['status', id], { home: u.h.root });
  assert.equal(out.code, 0, out.stderr);
  assert.ok(
    out.stdout.includes(`plan       3 steps: 1 done, 1 in progress, 1 pending (updated ${at})\n  [x] Read the spec\n  [>] Write the code\\u001b[2J\n  [ ] Test it\n`),
    out.stdout,
  );
  const js = JSON.parse((await cliInProcess(['status', id, '--json'], { home: u.h.root })).stdout);
  assert.deepEqual(js.plan, { items, updated_at: at });

  const none = await cliInProcess(['status', bare], { home: u.h.root });
  assert.equal(none.code, 0, none.stderr);
  assert.doesNotMatch(none.stdout, /^plan /m);
  assert.equal(JSON.parse((await cliInProcess(['status', bare, '--json'], { home: u.h.root })).stdout).plan, null);
});
