/** HTML to Markdown in a worker: the daemon's thread stays free, a deadline stops it, and few run at once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversions, htmlToMarkdown, MAX_CONVERSIONS } from '../../src/core/egress/html-markdown.js';

test('a page is converted off the daemon thread: the thread is free meanwhile, and an abort stops the conversion', async () => {
  // Many seconds of turndown's work (its time grows with the square of the nesting depth).
  const deep = `${'<div>'.repeat(20_000)}x${'</div>'.repeat(20_000)}`;
  const ac = new AbortController();
  let settled = false;
  const converting = htmlToMarkdown(deep, ac.signal).finally(() => {
    settled = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'the conversion ran on the calling thread');
  ac.abort(new Error('deadline'));
  await assert.rejects(converting, /deadline/);
});

test('a plain page converts; scripts and styles are dropped', async () => {
  const md = await htmlToMarkdown('<h1>T</h1><script>x()</script><style>p{}</style><p>Some <a href="/x">link</a>.</p>', new AbortController().signal);
  assert.equal(md, '# T\n\nSome [link](/x).');
});

test('at most MAX_CONVERSIONS pages convert at once in the process; the others wait their turn, and one whose signal aborts while it waits leaves the queue', async () => {
  const deep = `${'<div>'.repeat(20_000)}x${'</div>'.repeat(20_000)}`;
  const slow = Array.from({ length: MAX_CONVERSIONS }, () => new AbortController());
  const busy = slow.map((ac) => htmlToMarkdown(deep, ac.signal).catch((e: unknown) => e));
  const gone = new AbortController();
  const waits = htmlToMarkdown('<p>gives up</p>', gone.signal);
  const after = htmlToMarkdown('<p>its turn</p>', new AbortController().signal);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(conversions(), { running: MAX_CONVERSIONS, waiting: 2 });
  gone.abort(new Error('deadline while waiting'));
  await assert.rejects(waits, /deadline while waiting/);
  assert.deepEqual(conversions(), { running: MAX_CONVERSIONS, waiting: 1 });
  slow[0]!.abort(new Error('stopped'));
  assert.equal(await after, 'its turn');
  slow.forEach((ac) => ac.abort(new Error('stopped')));
  await Promise.all(busy);
  assert.deepEqual(conversions(), { running: 0, waiting: 0 });
});
