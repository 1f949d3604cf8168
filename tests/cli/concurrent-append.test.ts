/**
 * Eight writers append to one log at once: four `openboa send --lines`
 * processes (messages up to 48 KB, well past PIPE_BUF) and four shell loops of
 * raw `echo >>`. Every one of the 10,000 lines must come back whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { CLI, cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';

const PER_WRITER = 1250;

function run(cmd: string, args: string[], input?: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'inherit'] });
    c.on('error', reject);
    c.on('close', resolve);
    // A child that exits early closes its stdin: that shows as its exit code, not as an EPIPE here.
    c.stdin.on('error', () => undefined);
    c.stdin.end(input ?? '');
  });
}

test('8 processes appending 10,000 lines at once leave 10,000 whole, parseable lines', { timeout: 180_000 }, async (t) => {
  const { root } = tempHome(t);
  const created = await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root });
  const id = created.stdout.trim();
  const log = path.join(root, 'sessions', id, 'events.jsonl');

  const jobs: Array<Promise<number | null>> = [];
  for (let w = 0; w < 4; w++) {
    // Sizes cycle from 10 bytes to 48 KB so some writes span many pages.
    const input = Array.from({ length: PER_WRITER }, (_, i) => `send-${w}-${i}-${'x'.repeat((i * 977) % 49_152)}`).join('\n');
    jobs.push(run(process.execPath, [CLI, '--home', root, 'send', id, '--lines'], input));
  }
  for (let w = 0; w < 4; w++) {
    const script = `for i in $(seq 0 ${PER_WRITER - 1}); do echo "{\\"type\\":\\"user.message\\",\\"content\\":\\"echo-${w}-$i\\"}" >> '${log}'; done`;
    jobs.push(run('bash', ['-c', script]));
  }
  const codes = await Promise.all(jobs);
  assert.deepEqual(codes, Array(8).fill(0));

  const { lines, heldBack } = readLines(log);
  assert.equal(heldBack, 0);
  const seen = new Map<string, number>();
  let messages = 0;
  for (const raw of lines) {
    const r = parseEventLine(raw, Date.now());
    if (r.kind === 'blank') continue;
    assert.equal(r.kind, 'event', `line ${raw.no} is not a whole event: ${raw.text.slice(0, 80)}`);
    if (r.kind !== 'event' || r.event.type !== 'user.message') continue;
    messages += 1;
    const text = r.event.content[0]?.type === 'text' ? r.event.content[0].text : '';
    const m = /^(send|echo)-(\d)-(\d+)-?(x*)$/.exec(text);
    assert.ok(m, `line ${raw.no}: unexpected text ${text.slice(0, 60)}`);
    const [, kind, w, i, xs] = m;
    if (kind === 'send') assert.equal(xs!.length, (Number(i) * 977) % 49_152, `line ${raw.no} lost bytes`);
    const key = `${kind}-${w}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  assert.equal(messages, 10_000);
  assert.equal(seen.size, 8);
  for (const [k, n] of seen) assert.equal(n, PER_WRITER, k);
  assert.equal(fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.trim()).length, 10_001);
});

/** The text of every whole user.message in the log, with a check that each line parsed. */
function messagesOf(log: string): string[] {
  const out: string[] = [];
  for (const raw of readLines(log).lines) {
    const r = parseEventLine(raw, Date.now());
    if (r.kind === 'blank') continue;
    assert.equal(r.kind, 'event', `line ${raw.no} is not a whole event: ${raw.text.slice(0, 80)}`);
    if (r.kind === 'event' && r.event.type === 'user.message') out.push(r.event.content[0]?.type === 'text' ? r.event.content[0].text : '');
  }
  return out;
}

const MB = 1024 * 1024;

test('8 concurrent `openboa send` of 1 MB messages: each is one write, none lost or torn', { timeout: 180_000 }, async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const jobs: Array<Promise<number | null>> = [];
  for (let w = 0; w < 8; w++) {
    for (let k = 0; k < 2; k++) jobs.push(run(process.execPath, [CLI, '--home', root, 'send', id, '-'], `big-${w}-${k}-${String.fromCharCode(97 + w).repeat(MB)}`));
  }
  assert.deepEqual(await Promise.all(jobs), Array(16).fill(0));
  const texts = messagesOf(path.join(root, 'sessions', id, 'events.jsonl'));
  assert.equal(texts.length, 16);
  for (const s of texts) {
    const m = /^big-(\d)-(\d)-([a-h]+)$/.exec(s);
    assert.ok(m, `torn message: ${s.slice(0, 40)}`);
    assert.equal(m[3]!.length, MB);
    assert.equal(m[3], String.fromCharCode(97 + Number(m[1])).repeat(MB));
  }
  assert.equal(new Set(texts.map((s) => s.slice(0, 10))).size, 16);
});

test('8 concurrent inbox writers of 1 MB lines: every message arrives whole, exactly once', { timeout: 180_000 }, async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const inbox = path.join(root, 'sessions', id, 'inbox');
  // Each writer makes inbox/ (made on first use: all 8 race to), writes a hidden file in it, then renames it in (the contract in docs/format.md).
  const writer = `const fs=require('fs'),path=require('path');const [dir,w]=process.argv.slice(1);fs.mkdirSync(dir,{recursive:true});for(let k=0;k<3;k++){const text=JSON.stringify({type:'user.message',content:'inbox-'+w+'-'+k+'-'+'z'.repeat(${MB})});const tmp=path.join(dir,'.w'+w+'-'+k);fs.writeFileSync(tmp,text+'\\n');fs.renameSync(tmp,path.join(dir,w+'-'+k+'.jsonl'));}`;
  const jobs: Array<Promise<number | null>> = [];
  for (let w = 0; w < 8; w++) jobs.push(run(process.execPath, ['-e', writer, inbox, String(w)]));
  // a run in the middle of the writing drains what is there so far
  jobs.push(cliInProcess(['wake', id], { home: root }).then((r) => r.code));
  assert.deepEqual(await Promise.all(jobs), Array(9).fill(0));
  assert.equal((await cliInProcess(['wake', id], { home: root })).code, 0);
  const texts = messagesOf(path.join(root, 'sessions', id, 'events.jsonl'));
  assert.equal(texts.length, 24);
  assert.equal(new Set(texts.map((s) => s.slice(0, 12))).size, 24, 'each exactly once');
  for (const s of texts) assert.match(s, new RegExp(`^inbox-\\d-\\d-z{${MB}}$`));
  assert.deepEqual(fs.readdirSync(inbox).filter((n) => !n.startsWith('.')), []);
});
