/**
 * The file tools and bash, run in-process against the memory sandbox: what
 * each answers, word for word, for what it can be asked. (The same tools
 * against the host's files are in tests/run/tools.test.ts; the memory
 * sandbox is held to the host one by tests/core/sandbox-contract.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { ManualClock } from '../helpers/clock.js';
import { toolRunner } from '../helpers/tools.js';

const ok = (text: string) => ({ text, isError: false });
const err = (text: string) => ({ text, isError: true });

test('write then read: numbered lines, a range, an empty and a binary file', async () => {
  const sb = new MemorySandbox({ files: { 'empty.txt': '', 'blob.bin': new Uint8Array([1, 0, 2]) } });
  const t = toolRunner(sb);
  assert.deepEqual(await t.run('write', { file_path: 'src/app.txt', content: 'alpha\nbeta\ngamma\n' }), ok('wrote 17 bytes to /workspace/src/app.txt'));
  assert.equal(sb.text('/workspace/src/app.txt'), 'alpha\nbeta\ngamma\n');
  assert.deepEqual(await t.run('read', { file_path: '/workspace/src/app.txt' }), ok('1\talpha\n2\tbeta\n3\tgamma'));
  assert.deepEqual(await t.run('read', { file_path: 'src/app.txt', view_range: [2, 3] }), ok('2\tbeta\n3\tgamma'));
  assert.deepEqual(await t.run('read', { file_path: 'src/app.txt', view_range: [2, -1] }), ok('2\tbeta\n3\tgamma'));
  assert.deepEqual(await t.run('read', { file_path: 'src/app.txt', view_range: [9, 10] }), err('view_range starts at line 9, but /workspace/src/app.txt has 3 lines'));
  assert.deepEqual(await t.run('read', { file_path: 'empty.txt' }), ok('(empty file)'));
  assert.deepEqual(await t.run('read', { file_path: 'blob.bin' }), ok('(binary file, 3 bytes)'));
  assert.deepEqual(await t.run('write', { file_path: 'src/app.txt', content: 'é' }), ok('wrote 2 bytes to /workspace/src/app.txt'), 'bytes, not characters');
});

test('read lists a directory: sorted, directories with a slash, bounded', async () => {
  const files: Record<string, string> = { 'b.txt': '', 'a/x.txt': '', 'a.md': '' };
  for (let i = 0; i < 2001; i++) files[`big/f${String(i).padStart(4, '0')}`] = '';
  const sb = new MemorySandbox({ files, dirs: ['empty'] });
  const t = toolRunner(sb);
  assert.deepEqual(await t.run('read', { file_path: '/workspace' }), ok('a.md\na/\nb.txt\nbig/\nempty/'));
  assert.deepEqual(await t.run('read', { file_path: 'empty' }), ok('(empty directory)'));
  const big = (await t.run('read', { file_path: 'big' })).text.split('\n');
  assert.equal(big.length, 2001);
  assert.equal(big[0], 'f0000');
  assert.equal(big[1999], 'f1999');
  assert.equal(big[2000], '(more entries not shown; use glob or bash ls to look further)');
});

test('paths: relative to /workspace, refused outside the mounts, read-only /runtime, errors name sandbox paths', async () => {
  const sb = new MemorySandbox({ files: { 'a.txt': 'A', '/runtime/environment.json': '{"isolation":"none"}' } });
  const t = toolRunner(sb);
  assert.deepEqual(await t.run('read', { file_path: 'sub/../a.txt' }), ok('1\tA'));
  assert.deepEqual(await t.run('read', { file_path: '../session.json' }), err('../session.json: outside the workspace (/session.json is not under /workspace, /runtime)'));
  assert.deepEqual(await t.run('read', { file_path: '/etc/passwd' }), err('/etc/passwd: outside the workspace (/etc is not under /workspace, /runtime)'));
  assert.deepEqual(await t.run('read', { file_path: '/' }), err('/: outside the workspace (resolves to /, which is not under /workspace, /runtime)'));
  assert.deepEqual(await t.run('write', { file_path: '/etc/x', content: '' }), err('/etc/x: outside the workspace (/etc is not under /workspace)'));
  assert.deepEqual(await t.run('read', { file_path: '/runtime/environment.json' }), ok('1\t{"isolation":"none"}'));
  assert.deepEqual(await t.run('write', { file_path: '/runtime/evil.json', content: '{}' }), err('/runtime/evil.json: /runtime is read-only'));
  assert.deepEqual(await t.run('edit', { file_path: '/runtime/environment.json', old_string: 'none', new_string: 'x' }), err('/runtime/environment.json: /runtime is read-only'));
  assert.deepEqual(await t.run('read', { file_path: '/workspace/nope/x.txt' }), err('/workspace/nope: no such file or directory'));
  assert.deepEqual(await t.run('read', { file_path: 'a.txt/below' }), err('/workspace/a.txt: not a directory'));
  assert.deepEqual(await t.run('write', { file_path: 'a.txt/below', content: 'x' }), err('/workspace/a.txt: not a directory'));
  assert.deepEqual(await t.run('write', { file_path: 'new/dir/f.txt', content: 'x' }), ok('wrote 1 bytes to /workspace/new/dir/f.txt'));
  assert.deepEqual(await t.run('write', { file_path: 'new', content: 'x' }), err('/workspace/new: is a directory'));
  assert.deepEqual(await t.run('write', { file_path: '/workspace', content: 'x' }), err('/workspace is not a regular file'));
  assert.deepEqual(await t.run('read', { file_path: 'bad\u0000name' }), err('"bad\\u0000name": a path must not contain NUL'));
  assert.deepEqual(sb.paths(), ['/runtime/environment.json', '/workspace/a.txt', '/workspace/new/dir/f.txt']);
});

test('edit: once, ambiguous, all, not found, missing; a refused edit leaves the file as it was', async () => {
  const sb = new MemorySandbox({ files: { 'app.txt': 'alpha\nbeta\ngamma\nbeta\n' } });
  const t = toolRunner(sb);
  assert.deepEqual(await t.run('edit', { file_path: 'app.txt', old_string: 'alpha', new_string: 'ALPHA' }), ok('replaced 1 occurrence(s) in /workspace/app.txt'));
  assert.deepEqual(await t.run('edit', { file_path: 'app.txt', old_string: 'beta', new_string: 'B' }), err('old_string occurs 2 times in /workspace/app.txt; give more context or set replace_all'));
  assert.equal(sb.text('app.txt'), 'ALPHA\nbeta\ngamma\nbeta\n');
  assert.deepEqual(await t.run('edit', { file_path: 'app.txt', old_string: 'beta', new_string: '$&$&', replace_all: true }), ok('replaced 2 occurrence(s) in /workspace/app.txt'));
  assert.equal(sb.text('app.txt'), 'ALPHA\n$&$&\ngamma\n$&$&\n', 'new_string is literal text, not a replacement pattern');
  assert.deepEqual(await t.run('edit', { file_path: 'app.txt', old_string: 'gamma', new_string: '$&' }), ok('replaced 1 occurrence(s) in /workspace/app.txt'));
  assert.equal(sb.text('app.txt'), 'ALPHA\n$&$&\n$&\n$&$&\n');
  assert.deepEqual(await t.run('edit', { file_path: 'app.txt', old_string: 'nope', new_string: 'x' }), err('old_string was not found in /workspace/app.txt'));
  assert.deepEqual(await t.run('edit', { file_path: 'missing.txt', old_string: 'a', new_string: 'b' }), err('/workspace/missing.txt: no such file or directory'));
  assert.deepEqual(await t.run('edit', { file_path: '/workspace', old_string: 'a', new_string: 'b' }), err('/workspace is not a regular file'));
});

test('glob: newest first, from a path, refusals, and a note past 1000 results', async () => {
  const clock = new ManualClock();
  const sb = new MemorySandbox({ clock });
  const t = toolRunner(sb);
  for (const f of ['docs/old.md', 'src/a.txt', 'docs/new.md', '.hidden.md']) {
    await t.run('write', { file_path: f, content: f });
    await clock.advance(1000);
  }
  assert.deepEqual(await t.run('glob', { pattern: '**/*.md' }), ok('/workspace/.hidden.md\n/workspace/docs/new.md\n/workspace/docs/old.md'));
  assert.deepEqual(await t.run('glob', { pattern: '*.md', path: 'docs' }), ok('/workspace/docs/new.md\n/workspace/docs/old.md'));
  assert.deepEqual(await t.run('glob', { pattern: '*.rs' }), ok('no files matched'));
  assert.deepEqual(await t.run('glob', { pattern: '../*' }), err('pattern "../*" must be relative and must not contain ..; use path to choose the directory'));
  assert.deepEqual(await t.run('glob', { pattern: '*', path: 'src/a.txt' }), err('/workspace/src/a.txt is not a directory'));
  assert.deepEqual(await t.run('glob', { pattern: '*', path: 'nope' }), err('/workspace/nope: no such file or directory'));
  assert.deepEqual(await t.run('glob', { pattern: '*a'.repeat(30) }), err('pattern has 30 wildcards; at most 24'));
  const many: Record<string, string> = {};
  for (let i = 0; i < 1003; i++) many[`m/f${i}.txt`] = '';
  const lines = (await toolRunner(new MemorySandbox({ files: many })).run('glob', { pattern: 'm/*.txt' })).text.split('\n');
  assert.equal(lines.length, 1001);
  assert.equal(lines[1000], '(3 more not shown)');
});

test('grep: path:line:text in walk order, a file or a directory, binary files skipped, refusals', async () => {
  const sb = new MemorySandbox({
    files: { 'src/app.txt': 'alpha\nB\ngamma\nB\n', 'src/b/deep.txt': 'B\n', 'src/blob': new Uint8Array([66, 0, 66]), 'other.txt': 'B' },
  });
  const t = toolRunner(sb);
  assert.deepEqual(await t.run('grep', { pattern: '^B$', path: '/workspace/src' }), ok('/workspace/src/app.txt:2:B\n/workspace/src/app.txt:4:B\n/workspace/src/b/deep.txt:1:B'));
  assert.deepEqual(await t.run('grep', { pattern: 'gam+a', path: 'src/app.txt' }), ok('/workspace/src/app.txt:3:gamma'));
  assert.deepEqual(await t.run('grep', { pattern: '^B$' }), ok('/workspace/other.txt:1:B\n/workspace/src/app.txt:2:B\n/workspace/src/app.txt:4:B\n/workspace/src/b/deep.txt:1:B'));
  assert.deepEqual(await t.run('grep', { pattern: 'zeta' }), ok('no matches'));
  assert.deepEqual(await t.run('grep', { pattern: 'x', path: '../' }), err('../: outside the workspace (resolves to /, which is not under /workspace, /runtime)'));
  assert.deepEqual(await t.run('grep', { pattern: '(' }), err('pattern is not a valid regular expression: Invalid regular expression: /(/: Unterminated group'));
  assert.deepEqual(await t.run('grep', { pattern: `${'(?:a|'.repeat(40)}b${')*'.repeat(40)}` }), err('pattern nests groups 40 deep; at most 32'));
  assert.deepEqual(await t.run('grep', { pattern: 'a'.repeat(2001) }), err('pattern is 2001 characters; at most 2000'));
});

test('grep: past 500 matching lines, the rest are counted and not shown', async () => {
  const t = toolRunner(new MemorySandbox({ files: { 'many.txt': 'hit\n'.repeat(520) } }));
  const lines = (await t.run('grep', { pattern: 'hit' })).text.split('\n');
  assert.equal(lines.length, 501);
  assert.equal(lines[499], '/workspace/many.txt:500:hit');
  assert.equal(lines[500], '(20 more matches not shown)');
});

test('glob and grep stop when the run is stopped', async () => {
  const t = toolRunner(new MemorySandbox({ files: { 'a.txt': 'a' } }));
  const stopped = AbortSignal.abort();
  assert.deepEqual(await t.run('glob', { pattern: '*' }, { signal: stopped }), err('glob was interrupted'));
  assert.deepEqual(await t.run('grep', { pattern: 'a' }, { signal: stopped }), err('grep was interrupted'));
});

test('output over the limit is saved through the sandbox; the model gets head, tail and path', async () => {
  const sb = new MemorySandbox({ files: { 'big.txt': Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n') } });
  const t = toolRunner(sb, { outputLimitChars: 1000 });
  const r = await t.run('read', { file_path: 'big.txt' });
  assert.equal(r.isError, false);
  const m = /\[\.\.\. output truncated: the whole output \((\d+) characters\) is in (\/workspace\/\.openboa\/tool-output\/sevt_tool_1\.txt); read it with read or grep \.\.\.\]/.exec(r.text);
  assert.ok(m, r.text.slice(0, 300));
  assert.equal(sb.text(m[2]!)!.length, Number(m[1]));
  assert.match(r.text, /^ {3}1\tline 0\n/);
  assert.match(r.text, /3000\tline 2999$/);
});

test('bash: no shell in the memory sandbox unless the test answers; exit codes, timeouts, restart', async () => {
  assert.deepEqual(
    await toolRunner(new MemorySandbox()).run('bash', { command: 'ls' }),
    err('could not start the shell: no shell in the memory sandbox (give MemorySandbox an exec handler to answer commands)'),
  );
  const seen: Array<{ command: string; cwd: string; timeoutMs: number }> = [];
  const sb = new MemorySandbox({
    files: { 'a.txt': 'A' },
    exec: (command, o) => {
      seen.push({ command, cwd: o.cwd, timeoutMs: o.timeoutMs });
      if (command === 'cat a.txt') return o.sandbox.text('a.txt') ?? '';
      if (command === 'cd sub') return { cwd: '/workspace/sub' };
      if (command === 'false') return { output: 'no', exitCode: 1 };
      if (command === 'sleep 99') return { output: 'partial', exitCode: null, timedOut: true };
      return { output: '', exitCode: 127 };
    },
  });
  const t = toolRunner(sb, { shellTimeoutMs: 5000 });
  assert.deepEqual(await t.run('bash', { command: 'cat a.txt' }), ok('A'));
  assert.deepEqual(await t.run('bash', { command: 'cd sub' }), ok('(no output)'));
  assert.deepEqual(await t.run('bash', { command: 'false' }), err('no\n[exit code 1]'));
  assert.deepEqual(await t.run('bash', { command: 'sleep 99', timeout_ms: 50 }), err('partial\n[timed out after 50 ms: the command was killed]'));
  assert.deepEqual(await t.run('bash', { restart: true }), ok('started a fresh shell in the workspace'));
  assert.deepEqual(await t.run('bash', { command: 'nope' }), err('[exit code 127]'));
  assert.deepEqual(seen.map((s) => [s.command, s.cwd, s.timeoutMs]), [
    ['cat a.txt', '/workspace', 5000],
    ['cd sub', '/workspace', 5000],
    ['false', '/workspace/sub', 5000],
    ['sleep 99', '/workspace/sub', 50],
    ['nope', '/workspace', 5000],
  ]);
});

test('secrets in a tool output are redacted before the model sees them', async () => {
  const t = toolRunner(new MemorySandbox({ files: { 'env.txt': 'TOKEN=s3cr3t-value' } }), { secrets: { API_TOKEN: 's3cr3t-value' } });
  assert.deepEqual(await t.run('read', { file_path: 'env.txt' }), ok('1\tTOKEN=[REDACTED:API_TOKEN]'));
});
