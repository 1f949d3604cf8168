/**
 * The command line a person expects: help on every level and as a command,
 * the version, unknown flags and commands refused in one line with a
 * suggestion, and bad values named in our own words (issue 11, item 7).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, cliInProcess } from '../helpers/cli.js';
import { REPO, tempHome } from '../helpers/home.js';

const oneLine = (stderr: string) => stderr.trim().split('\n').length === 1;

test('openboa help and help <command> show the same help as --help; -V/--version is listed and works', async (t) => {
  const { root } = tempHome(t);
  const top = await cliInProcess(['help'], { home: root });
  assert.equal(top.code, 0, top.stderr);
  assert.equal(top.stdout, (await cliInProcess(['--help'], { home: root })).stdout);
  assert.match(top.stdout, /-V, --version\s+print the version/);
  for (const c of ['init', 'doctor', 'agents', 'session create', 'sessions', 'events', 'help']) assert.match(top.stdout, new RegExp(`\\n  ${c} `), c);

  const events = await cliInProcess(['help', 'events'], { home: root });
  assert.equal(events.code, 0, events.stderr);
  assert.equal(events.stdout, (await cliInProcess(['events', '--help'], { home: root })).stdout);
  assert.match(events.stdout, /^usage: openboa events \[options\] <id>/);
  assert.match(events.stdout, /--full\s+print every message whole/);
  assert.match(events.stdout, /id\s+the session id \(or a unique part of it, e.g. the last 8 digits\)/);

  const withArgs = await cliInProcess(['help', 'send', 'some-id', 'hello'], { home: root });
  assert.equal(withArgs.code, 0, 'words past a command are its arguments: its help, nothing sent');
  assert.match(withArgs.stdout, /^usage: openboa send \[options\] <id> \[text\.\.\.\]/);

  const nested = await cliInProcess(['help', 'session', 'create'], { home: root });
  assert.equal(nested.code, 0, nested.stderr);
  assert.match(nested.stdout, /^usage: openboa session create/);

  // The binary: the version it prints is the installed package's.
  for (const flag of ['-V', '--version']) {
    const v = await cli([flag], { home: root });
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+\n$/);
  }
});

test('unknown flags are an error naming the flag (exit 2, one line), with "did you mean" when one is close', async (t) => {
  const { root } = tempHome(t);
  const cases: Array<[string[], RegExp]> = [
    [['--bogus'], /^openboa: unknown option "--bogus"; see: openboa help\n$/],
    [['sessions', '--bogus'], /^openboa: unknown option "--bogus" for sessions; see: openboa help sessions\n$/],
    [['sessions', '--stauts', 'idle'], /unknown option "--stauts" for sessions \(did you mean --status\?\)/],
    [['events', 'x', '--ful'], /unknown option "--ful" for events \(did you mean --full\?\)/],
    [['--hme', root, 'sessions'], /unknown option "--hme" \(did you mean --home\?\)/],
    [['session', 'create', '--agnt', 'demo'], /unknown option "--agnt" for session create \(did you mean --agent\?\)/],
  ];
  for (const [args, re] of cases) {
    const r = await cliInProcess(args, { home: root });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
    assert.ok(oneLine(r.stderr), `one line for ${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', 'no help on stdout');
  }
  const json = await cliInProcess(['sessions', '--bogus', '--json'], { home: root });
  assert.equal(json.code, 2);
  assert.deepEqual(JSON.parse(json.stderr), { error: { code: 'usage', message: 'unknown option "--bogus" for sessions; see: openboa help sessions' } });
});

test('an unknown command suggests the closest one, also through help and inside a group', async (t) => {
  const { root } = tempHome(t);
  const cases: Array<[string[], RegExp]> = [
    [['sesions'], /unknown command "sesions" \(did you mean sessions\?\)/],
    [['agent'], /unknown command "agent" \(did you mean agents\?\)/],
    [['help', 'evnets'], /unknown command "evnets" \(did you mean events\?\)/],
    [['session', 'crate'], /unknown command "session crate" \(did you mean create\?\)/],
  ];
  for (const [args, re] of cases) {
    const r = await cliInProcess(args, { home: root });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.ok(oneLine(r.stderr));
  }
});

test('bad numbers and durations get our own one-line error naming the flag and what was expected', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const cases: Array<[string[], RegExp]> = [
    [['events', id, '--limit', 'x'], /^openboa: --limit "x" is not a whole number \(expected a whole number, e\.g\. --limit 20\)$/],
    [['events', id, '--limit', '1e3'], /--limit "1e3" is not a whole number/],
    [['events', id, '--limit', ''], /--limit "" is not a whole number/],
    [['events', id, '--limit'], /^openboa: --limit needs a value: --limit N \(usage: openboa events/],
    [['sessions', '--limit', '0'], /--limit 0 is out of range \(expected a whole number >= 1/],
    [['sessions', '--limit', '-3'], /--limit "-3" is not a whole number/],
    [['sessions', '--status', 'sleeping'], /--status "sleeping" is not one of idle, running, rescheduling, terminated/],
    [['daemon', '--concurrency', '0'], /--concurrency 0 is out of range \(expected a whole number >= 1/],
    [['daemon', '--concurrency', 'lots'], /--concurrency "lots" is not a whole number/],
    [['session', 'update', id, '--budget', 'x'], /--budget "x" is not a whole number of tokens/],
    [['schedule', id, '--in', 'soon'], /^openboa: --in "soon" is not a duration \(expected a duration such as 90s, 10m, 1h30m or 2d\)$/],
    [['schedule', id, '--in', '10m please'], /--in "10m please" is not a duration/],
    [['schedule', id, '--in', '-5m'], /--in "-5m" is not a duration/],
    [['schedule', id, '--in', '3 fortnights'], /--in "3 fortnights" is not a duration/],
    [['schedule', id, '--in', '999999d'], /--in must be at most ten years/],
    [['schedule', id, '--in', `${'9'.repeat(400)}d`], /--in "9+d" is not a duration/],
  ];
  for (const [args, re] of cases) {
    const r = await cliInProcess(args, { home: root });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trimEnd(), re, args.join(' '));
    assert.ok(oneLine(r.stderr), args.join(' '));
    assert.doesNotMatch(r.stderr, /ERR_|TypeError|RangeError|\n\s+at /, 'no Node wording or stack');
  }
});

test('schedule --in takes 1h30m, 90s, 2d, 10m and "1 hour 30 minutes"', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  for (const [text, ms] of [
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['2d', 172_800_000],
    ['10m', 600_000],
    ['1 hour 30 minutes', 5_400_000],
    ['45', 45_000],
  ] as const) {
    const r = await cliInProcess(['schedule', id, '--in', text, '--json'], { home: root });
    assert.equal(r.code, 0, `${text}: ${r.stderr}`);
    const rec = JSON.parse(r.stdout);
    const delta = Date.parse(rec.due_at) - Date.parse(rec.created_at);
    assert.ok(Math.abs(delta - ms) < 1000, `${text}: due ${delta} ms after creation, expected ${ms}`);
  }
});

test("the README's CLI table names every command", async () => {
  const { COMMANDS } = await import('../../src/cli/command-catalog.js');
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The CLI'), readme.indexOf('## The home'));
  const missing = COMMANDS.map((c) => `openboa ${c.path.join(' ')}`).filter((c) => !new RegExp(`\\| \`${c}[ \`]`).test(section));
  assert.deepEqual(missing, []);
});

test('daemon: bad --concurrency and --sweep get our one-line error, exit 2, before anything starts', async (t) => {
  const { root } = tempHome(t);
  for (const [flag, value] of [['--concurrency', '0'], ['--concurrency', '1e1'], ['--sweep', 'soon'], ['--sweep', '0x4']]) {
    const r = await cliInProcess(['daemon', flag as string, value as string], { home: root });
    assert.equal(r.code, 2, `${flag} ${value}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^openboa: ${flag} .*(not a whole number|out of range) \\(expected a whole number >= 1`));
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
