/**
 * Colour on a terminal only: a real TTY (node-pty) gets coloured status
 * words and errors; NO_COLOR, --json and pipes get none. On a TTY, lines are
 * clipped to the terminal's own width (issue 11, item 7).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as pty from 'node-pty';
import stringWidth from 'string-width';
import { CLI, cli, cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';

const ESC = '\u001b[';

/** Runs the CLI on a pseudo-terminal `cols` wide; resolves with everything it printed (stdout and stderr share the TTY) and its exit code. */
function onTty(args: string[], o: { cols?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', ...o.env };
  delete env.NO_COLOR;
  if (o.env?.NO_COLOR !== undefined) env.NO_COLOR = o.env.NO_COLOR;
  delete env.OPENBOA_HOME;
  return new Promise((resolve) => {
    const p = pty.spawn(process.execPath, [CLI, ...args], { name: 'xterm-256color', cols: o.cols ?? 120, rows: 40, cwd: path.dirname(CLI), env: env as Record<string, string> });
    let out = '';
    p.onData((d) => {
      out += d;
    });
    p.onExit(({ exitCode }) => resolve({ code: exitCode, out: out.replace(/\r\n/g, '\n') }));
  });
}

test('on a TTY, status words and errors are coloured; NO_COLOR, --json and pipes are never coloured', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();

  const tty = await onTty(['--home', root, 'sessions']);
  assert.equal(tty.code, 0, tty.out);
  assert.ok(tty.out.includes(`${ESC}32midle${ESC}39m`), `idle in green: ${JSON.stringify(tty.out)}`);
  assert.match(tty.out, new RegExp(`${id}\\s+demo\\s+\\u001b\\[32midle`), 'colour codes do not break the columns');

  const err = await onTty(['--home', root, 'status', 'fff']);
  assert.equal(err.code, 3);
  assert.ok(err.out.startsWith(`${ESC}31mopenboa:${ESC}39m session "fff" not found`), JSON.stringify(err.out));

  for (const [what, r] of [
    ['NO_COLOR', await onTty(['--home', root, 'sessions'], { env: { NO_COLOR: '1' } })],
    ['--json', await onTty(['--home', root, 'sessions', '--json'])],
    ['--json error', await onTty(['--home', root, 'status', 'fff', '--json'])],
  ] as const) {
    assert.ok(!r.out.includes(ESC), `${what}: ${JSON.stringify(r.out)}`);
  }
  assert.equal(JSON.parse((await onTty(['--home', root, 'sessions', '--json'])).out).status, 'idle');

  // The binary, writing into real pipes.
  const piped = await cli(['sessions'], { home: root });
  const pipedErr = await cli(['status', 'fff'], { home: root });
  assert.ok(!piped.stdout.includes(ESC) && !pipedErr.stderr.includes(ESC), 'a pipe gets plain text');
});

test("on a TTY, events are clipped to the terminal's width", async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  fs.appendFileSync(path.join(root, 'sessions', id, 'events.jsonl'), `${JSON.stringify({ type: 'user.message', content: 'many words '.repeat(30) })}\n`);
  for (const cols of [70, 150]) {
    // COLUMNS in the environment does not override the terminal's own width.
    const r = await onTty(['--home', root, 'events', id], { cols, env: { COLUMNS: '40' } });
    assert.equal(r.code, 0, r.out);
    const lines = r.out.trimEnd().split('\n');
    assert.equal(lines.length, 2, r.out);
    const widths = lines.map((l) => stringWidth(l));
    assert.ok(widths.every((w) => w <= cols), `${cols} columns: ${widths}`);
    assert.ok((widths[1] ?? 0) > cols - 10, `the long line uses the width: ${widths}`);
  }
});
