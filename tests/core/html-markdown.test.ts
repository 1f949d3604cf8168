/** HTML to Markdown in a worker: the daemon's thread stays free, and a deadline stops it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { htmlToMarkdown } from '../../src/core/egress/html-markdown.js';

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
