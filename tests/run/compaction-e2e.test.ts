/**
 * Compaction through the real SDK against the scripted Messages API server:
 * the provider's token counting is consulted near the threshold, the
 * summary is its own request (no tools), later requests open with it, and
 * every event the runs wrote validates against the SDK's types.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bench } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';

const REPLY = '## Task Overview\nanswer questions\n## Current State\nanswering\n## Key Discoveries\nnone\n## Next Steps\ngo on\n## Context to Preserve\n#critical keep the tone formal';

test('a long conversation compacts through the SDK: counted, summarized in its own request, reopened by the summary', async (t) => {
  const b = await bench(t, { agent: { limits: { context_window_tokens: 20_000, max_output_tokens: 500 } }, steps: Array.from({ length: 16 }, () => ({ text: REPLY })) });
  const id = b.session(`question 0: [VITAL] reply in French ${'lorem ipsum '.repeat(500)}`);
  await b.wake(id);
  for (let k = 1; k < 10; k++) {
    b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: `question ${k}: ${'lorem ipsum '.repeat(500)}` }] });
    await b.wake(id);
  }
  assert.ok(b.fake.counted.length >= 1, 'the provider counted the tokens near the threshold');
  const summaries = b.fake.requests.filter((r) => !(r.raw.tools ?? []).length);
  assert.equal(summaries.length, 1);
  assert.match(String(summaries[0]!.body.system), /## Task Overview, ## Current State, ## Key Discoveries, ## Next Steps, ## Context to Preserve/);
  assert.match(JSON.stringify(summaries[0]!.body.messages), /question 0: \[VITAL\] reply in French/);
  const last = b.fake.requests.at(-1)!.body.messages;
  const opening = (last[0]!.content as Array<{ text: string }>)[0]!.text;
  assert.ok(opening.includes('were compacted') && opening.includes('VITAL lines from the turns left out, verbatim:\n- question 0: [VITAL] reply in French'), 'the summary opens the request, the VITAL line verbatim after it');
  const blocks = last.flatMap((m) => (m.content as Array<{ text?: string }>).map((c) => c.text ?? ''));
  assert.ok(!blocks.some((t) => t.startsWith('question 0:')), 'the first question itself is left out');
  assert.equal(b.fake.unexpected, 0);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
