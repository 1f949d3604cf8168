/**
 * The run's side of reply previews: what the publisher sends the process's
 * hub for a watched session (a block's start, its text redacted even when a
 * secret is cut across deltas, the rest once the reply is whole), and that
 * nothing is done or kept for a session nobody watches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redactor } from '../../src/core/foundation/redact.js';
import { PreviewHub, type Preview } from '../../src/core/run/preview-hub.js';
import { previewPublisher } from '../../src/core/run/preview-publisher.js';
import type { RunContext } from '../../src/core/run/run-context.js';
import type { ModelRequest, ModelResponse } from '../../src/core/model/provider.js';

const SECRET = 'sk-abcdefghijklmnopqrstuvwxyz0123456789';
const ctx = { sessionId: 'S', runId: 'wrun_1', env: { redactor: new Redactor({ TOKEN: SECRET }) } } as unknown as RunContext;
const req = {} as ModelRequest;
const done = { response: {} as ModelResponse };

test('a secret cut across deltas never shows in a preview; the previews add up to the redacted text', () => {
  const hub = new PreviewHub();
  const got: Preview[] = [];
  const unwatch = hub.watch('S', (p) => got.push(p));
  const o = previewPublisher(hub);
  o.request!(ctx, req);
  const pieces = ['the key is sk-abcdefghij', 'klmnopqrstuvwxyz0123', '456789 and more text'];
  const shown: string[] = [];
  for (const text of pieces) {
    o.delta!(ctx, { kind: 'text', index: 0, text, eventId: 'sevt_1' });
    shown.push(got.flatMap((p) => (p.kind === 'delta' ? [p.text] : [])).join(''));
  }
  o.reply!(ctx, req, done, 0);
  const all = got.flatMap((p) => (p.kind === 'delta' ? [p.text] : [])).join('');
  assert.deepEqual(got[0], { kind: 'start', runId: 'wrun_1', eventId: 'sevt_1', type: 'agent.message' });
  assert.equal(all, `the key is [REDACTED:TOKEN] and more text`);
  for (const s of shown) assert.ok(!s.includes('sk-') && !/[a-z]{4,}[0-9]/.test(s.replace('[REDACTED:TOKEN]', '')), `nothing of the secret: ${JSON.stringify(s)}`);
  assert.equal(shown[0], 'the key is ', 'the start of the secret is held back');
  unwatch();
  assert.equal(hub.size, 0);
});

test('nothing is published or kept for a session nobody watches; a block first heard unwatched is never previewed', () => {
  const hub = new PreviewHub();
  const o = previewPublisher(hub);
  o.request!(ctx, req);
  o.delta!(ctx, { kind: 'text', index: 0, text: 'before anyone ', eventId: 'sevt_1' });
  const got: Preview[] = [];
  hub.watch('S', (p) => got.push(p));
  o.delta!(ctx, { kind: 'text', index: 0, text: 'watched', eventId: 'sevt_1' });
  o.delta!(ctx, { kind: 'thinking', index: 1, text: 'hmm', eventId: 'sevt_2' });
  o.delta!(ctx, { kind: 'text', index: 2, text: 'second block', eventId: 'sevt_3' });
  o.reply!(ctx, req, done, 0);
  assert.deepEqual(got.filter((p) => p.kind === 'start'), [
    { kind: 'start', runId: 'wrun_1', eventId: 'sevt_2', type: 'agent.thinking' },
    { kind: 'start', runId: 'wrun_1', eventId: 'sevt_3', type: 'agent.message' },
  ]);
  // The last "k" is a piece of the secret: held back until the reply was whole.
  assert.deepEqual(got.flatMap((p) => (p.kind === 'delta' ? [[p.eventId, p.text]] : [])), [['sevt_3', 'second bloc'], ['sevt_3', 'k']]);
});
