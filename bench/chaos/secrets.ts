/**
 * Part 4, secrets. One agent whose sessions run in an environment with a
 * secret (MY_TOKEN, 40 random lower-case hex characters with a prefix, from
 * the daemon's environment) and in one without it. The scripted model makes
 * the real daemon's sessions try to get the secret, or 16 characters of it,
 * into what the runtime keeps or shows:
 *
 *  - in the secret's environment (`attack-write`): bash copies it into
 *    /memory whole and in pieces (a prefix, a middle, a suffix), into
 *    MEMORY.md, into file names; prints it and pieces of it; `write` and
 *    `edit` are asked to put it into /memory documents (the runtime runs a
 *    tool with its input as the log holds it: redacted); `learn` records a
 *    lesson whose text and tags hold 30 of its characters (one tag
 *    upper-cased, which lower-casing, the tag's or a search index's, turns
 *    back into a piece);
 *  - in an environment without it (`attack-read`, after the first session
 *    settled): bash reads those files back; `search_sessions` and
 *    `read_session` look into the first session.
 *
 * Then the CLI reads everything a person would (`memory show`, `log`, the
 * listing, `events`, `learnings`, `search`, `status`), each with and without
 * the secret's variable in its environment. The home is searched, every file
 * and every file name, for the secret and every run of 16 of its characters,
 * except the agent's memory directory itself (the agent's own files keep what
 * it wrote there: docs/memory.md, "Secrets in memory"). So are every request
 * the model was sent and every CLI output. Each count must be 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { cli, createSession, readLog, round, sessionDir, settle, startReady, tempHome, textOf, writeFile } from './common.js';
import { factsOf, startModelServer, type Reply, type RequestBody } from './model-server.js';

export interface SecretsOptions {
  settleTimeoutS: number;
  keep: boolean;
}

/** The shortest run of a secret's characters that must not appear (the Redactor's FRAGMENT_MIN). */
const PIECE = 16;

export async function secretsPart(o: SecretsOptions) {
  const t0 = Date.now();
  const SECRET = `tok_${randomBytes(18).toString('hex')}`; // 40 characters
  const pieces = Array.from({ length: SECRET.length - PIECE + 1 }, (_, i) => SECRET.slice(i, i + PIECE));
  const holds = (text: string) => pieces.some((p) => text.includes(p));

  // ---------------------------------------------------------------- the scripted model
  const WRITE: Array<{ name: string; input: Record<string, unknown> }> = [
    { name: 'bash', input: { command: 'echo "$MY_TOKEN" > /memory/tok.md && echo "${MY_TOKEN:0:30}" > /memory/head.md && echo "x ${MY_TOKEN:10:20} y" > /memory/middle.md && echo "${MY_TOKEN: -16}" > /memory/tail.md' } },
    { name: 'bash', input: { command: 'mkdir -p /memory/notes && echo "the key starts ${MY_TOKEN:0:24}" >> /memory/MEMORY.md && touch "/memory/$MY_TOKEN.md" "/memory/notes/${MY_TOKEN:5:20}.txt"' } },
    { name: 'bash', input: { command: 'echo "$MY_TOKEN"; echo "${MY_TOKEN:3:17}"; printenv MY_TOKEN | cut -c1-30; ls /memory /memory/notes' } },
    { name: 'write', input: { file_path: '/memory/w.md', content: `written ${SECRET} and ${SECRET.slice(2, 22)}\n` } },
    { name: 'learn', input: { kind: 'lesson', text: `the deploy token starts ${SECRET.slice(0, 30)}`, tags: [SECRET.slice(0, 30), SECRET.slice(8, 38).toUpperCase()] } },
  ];
  const EDIT = { name: 'edit', input: { file_path: '/memory/w.md', old_string: 'written', new_string: `edited ${SECRET.slice(4, 36)}` } };
  const READ = (target: string) => [
    { name: 'bash', input: { command: 'cat /memory/tok.md /memory/head.md /memory/middle.md /memory/tail.md /memory/w.md /memory/MEMORY.md; ls -R /memory' } },
    { name: 'search_sessions', input: { query: 'deploy token starts' } },
    { name: 'read_session', input: { session_id: target, before: 50, after: 50 } },
  ];
  let requestsHolding = 0;
  const decide = (body: RequestBody): Reply => {
    if (holds(JSON.stringify(body))) requestsHolding += 1;
    const f = factsOf(body);
    const asked = f.userTexts.join('\n');
    const used = new Set(f.toolUses.map((u) => u.name));
    if (asked.includes('attack-write')) {
      if (f.toolUses.length === 0) return { toolUses: WRITE };
      if (!used.has('edit')) return { toolUses: [EDIT] };
      return { text: 'remembered' };
    }
    const m = /attack-read (\S+)/.exec(asked);
    if (m) return f.toolUses.length === 0 ? { toolUses: READ(m[1]!) } : { text: 'read it all' };
    return { text: 'nothing to do' };
  };
  const server = await startModelServer(decide);

  // ---------------------------------------------------------------- the home: an environment with the secret, one without
  const home = tempHome('secrets');
  writeFile(home, 'environments/vault.yaml', ['description: local, with a deploy token', 'sandbox: auto', 'network: none', 'env:', '  MY_TOKEN: { secret: { env: CHAOS_SECRET_TOKEN } }', ''].join('\n'));
  writeFile(home, 'agents/keeper/agent.yaml', ['description: tries to keep a secret in its memory', 'provider: anthropic', 'model: chaos-model', 'environment: vault', 'memory: read_write', ''].join('\n'));
  const withSecret = { CHAOS_SECRET_TOKEN: SECRET };
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'chaos-not-a-key', ANTHROPIC_AUTH_TOKEN: undefined, ...withSecret };
  const daemon = await startReady(home, env, [], []);

  const a = await createSession(home, 'keeper');
  fs.appendFileSync(path.join(sessionDir(home, a), 'events.jsonl'), `${JSON.stringify({ type: 'user.message', content: 'please attack-write' })}\n`);
  const first = await settle(home, o.settleTimeoutS * 1000);
  const created = await cli(home, ['session', 'create', '--agent', 'keeper', '--env', 'local', '--json']);
  const b = (JSON.parse(created.stdout.trim().split('\n').pop() ?? '{}') as { id?: string }).id ?? '';
  if (b) fs.appendFileSync(path.join(sessionDir(home, b), 'events.jsonl'), `${JSON.stringify({ type: 'user.message', content: `please attack-read ${a}` })}\n`);
  const second = await settle(home, o.settleTimeoutS * 1000);
  await daemon.term();
  await server.close();

  // ---------------------------------------------------------------- what a person runs, with and without the variable
  const commands = [
    ['memory', 'keeper'],
    ['memory', 'keeper', 'log'],
    ['memory', 'keeper', 'log', '--json'],
    ['memory', 'keeper', 'show', 'tok.md'],
    ['memory', 'keeper', 'show', 'head.md'],
    ['memory', 'keeper', 'show', 'w.md', '--json'],
    ['memory', 'keeper', 'show', 'MEMORY.md'],
    ['learnings', 'keeper'],
    ['learnings', 'keeper', '--json'],
    ['events', a],
    ['events', a, '--json'],
    ['events', b],
    ['status', a],
    ['search', 'deploy token'],
    ['search', 'deploy token', '--json'],
  ];
  const cliLeaks: string[] = [];
  let cliFailed = 0;
  for (const cenv of [withSecret, {}]) {
    for (const args of commands) {
      const r = await cli(home, args, undefined, cenv);
      if (r.code !== 0) cliFailed += 1;
      if (holds(r.stdout + r.stderr)) cliLeaks.push(`${args.join(' ')}${Object.keys(cenv).length ? ' (with the variable)' : ''}`);
    }
  }

  // ---------------------------------------------------------------- the home, every file and name but the agent's own memory directory
  const memDir = path.join(home, 'agents', 'keeper', 'memory');
  const fileLeaks: string[] = [];
  let filesSearched = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (p === memDir) continue;
      if (holds(e.name)) fileLeaks.push(`${path.relative(home, p)} (name)`);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        filesSearched += 1;
        if (holds(fs.readFileSync(p, 'latin1'))) fileLeaks.push(path.relative(home, p));
      }
    }
  };
  walk(home);

  // ---------------------------------------------------------------- the attacks really ran
  const live = (rel: string) => fs.readFileSync(path.join(memDir, rel), 'utf8');
  const exercised = {
    tok_md_holds_the_secret: safe(() => live('tok.md').trim() === SECRET),
    file_named_after_it: safe(() => fs.existsSync(path.join(memDir, `${SECRET}.md`))),
    edit_done: safe(() => live('w.md').startsWith('edited ')),
    versions_recorded: safe(() => fs.readFileSync(path.join(home, 'agents', 'keeper', 'memory.log.jsonl'), 'utf8').includes('"path":"tok.md"')),
    learning_recorded: safe(() => fs.readFileSync(path.join(home, 'agents', 'keeper', 'learnings.jsonl'), 'utf8').includes('deploy token starts')),
    other_session_read_it: safe(() => readLog(path.join(sessionDir(home, b), 'events.jsonl')).events.some((l) => l.event.type === 'agent.tool_result' && textOf(l.event.content).includes('[REDACTED:MY_TOKEN]'))),
  };
  const toolErrors = [a, b].flatMap((id) => (id ? readLog(path.join(sessionDir(home, id), 'events.jsonl')).events : [])).filter((l) => l.event.type === 'agent.tool_result' && l.event.is_error === true).map((l) => textOf(l.event.content).slice(0, 160));

  const result = {
    part: 'secrets',
    options: o,
    note: null as string | null,
    figures: { files_searched: filesSearched, cli_commands: commands.length * 2, model_requests: server.stats.requests, tool_errors: toolErrors.length, exercised },
    invariants: {
      /** A file under the home (its content or its name), outside the agent's own memory directory, holding the secret or 16 characters of it. */
      files_holding_secret: fileLeaks.length,
      /** A CLI command whose output held it. */
      cli_outputs_holding_secret: cliLeaks.length,
      /** A request to the model that held it (tool results, the system prompt's MEMORY.md). */
      model_requests_holding_secret: requestsHolding,
      /** A CLI command that failed. */
      cli_commands_failed: cliFailed,
      /** An attack that did not happen (the invariants above would hold for nothing). */
      attacks_not_exercised: Object.values(exercised).filter((v) => !v).length,
      not_settled: first.settled && second.settled && b ? 0 : 1,
    },
    durations_s: { total: round((Date.now() - t0) / 1000) },
    examples: { files: fileLeaks.slice(0, 8), cli: cliLeaks.slice(0, 8), tool_errors: toolErrors.slice(0, 4) },
    home: null as string | null,
  };
  if (!o.keep && Object.values(result.invariants).every((v) => v === 0)) fs.rmSync(home, { recursive: true, force: true });
  else result.home = home;
  return result;
}

function safe(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return false;
  }
}
