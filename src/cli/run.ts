/**
 * The CLI dispatcher: finds the command, parses its arguments, runs it, and
 * turns every failure into one line on stderr and an exit code (SPEC §8):
 * 0 success, 1 runtime failure, 2 bad usage or input, 3 not found, 4 busy.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Readable, Writable } from 'node:stream';
import { resolveHome } from '../core/home.js';
import { systemDeps, type Deps } from '../core/deps.js';
import { SessionStore } from '../core/store/session-store.js';
import { OpenboaError } from '../core/errors.js';
import { COMMANDS } from './commands/index.js';
import { Output } from './output.js';
import { UsageError, usageLine, type CommandSpec, type CommandInput } from './command.js';
import { VERSION } from './version.js';
import { EXIT } from './exit.js';

export interface RunOptions {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
  deps?: Deps;
}


const GLOBAL: NonNullable<ParseArgsConfig['options']> = {
  home: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

/** Splits argv into the command's words and the rest, skipping global flags' values. */
function findCommand(argv: string[]): { spec: CommandSpec | null; group: string[]; rest: string[] } {
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i] as string;
    if (a === '--home') {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    words.push(i);
  }
  const w = words.map((i) => argv[i] as string);
  for (const n of [2, 1]) {
    const spec = COMMANDS.find((c) => c.path.length === n && c.path.every((p, k) => p === w[k]));
    if (spec) {
      const drop = new Set(words.slice(0, n));
      return { spec, group: spec.path, rest: argv.filter((_, i) => !drop.has(i)) };
    }
  }
  const group = w[0] && COMMANDS.some((c) => c.path[0] === w[0] && c.path.length > 1) ? [w[0]] : [];
  return { spec: null, group, rest: argv };
}

export function helpText(spec: CommandSpec | null, group: string[]): string {
  if (!spec) {
    const list = COMMANDS.filter((c) => group.every((g, i) => c.path[i] === g));
    const w = Math.max(...list.map((c) => c.path.join(' ').length));
    return [
      `openboa ${VERSION} — a filesystem-backed session daemon for long-running agents`,
      '',
      `usage: openboa ${group.length ? `${group.join(' ')} ` : ''}<command> [options]`,
      '',
      'commands:',
      ...list.map((c) => `  ${c.path.join(' ').padEnd(w)}  ${c.summary}`),
      '',
      'options on every command:',
      '  --home DIR   the home folder (default: $OPENBOA_HOME, else the current directory)',
      '  --json       machine-readable output; errors as {"error":{"code","message"}}',
      '  --help, -h   help for a command',
      '',
      'exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 not found, 4 busy',
    ].join('\n');
  }
  const lines = [`usage: ${usageLine(spec)}`, '', spec.summary];
  if (spec.args?.length) {
    lines.push('', 'arguments:');
    for (const a of spec.args) lines.push(`  ${a.name.padEnd(18)}  ${a.description}`);
  }
  const opts = Object.entries(spec.options ?? {});
  lines.push('', 'options:');
  for (const [k, o] of opts) lines.push(`  ${`--${k}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`.padEnd(18)}  ${o.description}`);
  lines.push(`  ${'--home DIR'.padEnd(18)}  the home folder`, `  ${'--json'.padEnd(18)}  machine-readable output`);
  if (spec.details) lines.push('', spec.details);
  return lines.join('\n');
}

function parseCommand(spec: CommandSpec, argv: string[]) {
  const options: NonNullable<ParseArgsConfig['options']> = { ...GLOBAL };
  for (const [k, o] of Object.entries(spec.options ?? {})) options[k] = { type: o.type, ...(o.short ? { short: o.short } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message.replace(/\. To specify.*$/, '')} (usage: ${usageLine(spec)})`);
  }
  return parsed;
}

/** Runs the CLI; returns the exit code. Never throws. */
export async function runCli(argv: string[], o: RunOptions): Promise<number> {
  const pre = parseArgs({ args: argv, options: GLOBAL, allowPositionals: true, strict: false });
  const json = pre.values.json === true;
  const out = new Output(o.stdout, o.stderr, json);
  try {
    if (pre.values.version === true && pre.positionals.length === 0) {
      o.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    const { spec, group, rest } = findCommand(argv);
    if (!spec) {
      // `openboa`, `openboa --help`, `openboa session`: the (group's) command list.
      if (pre.positionals.length === group.length) {
        o.stdout.write(`${helpText(null, group)}\n`);
        return EXIT.ok;
      }
      throw new UsageError(`unknown command "${pre.positionals.join(' ')}" (see openboa --help)`);
    }
    const parsed = parseCommand(spec, rest);
    if (parsed.values.help === true) {
      o.stdout.write(`${helpText(spec, spec.path)}\n`);
      return EXIT.ok;
    }
    const declared = spec.args ?? [];
    const args: Record<string, string | undefined> = {};
    declared.forEach((a, i) => {
      const v = parsed.positionals[i];
      if (v === undefined && a.required) throw new UsageError(`missing argument <${a.name}> (usage: ${usageLine(spec)})`);
      args[a.name] = v;
    });
    if (!spec.rest && parsed.positionals.length > declared.length) {
      throw new UsageError(`unexpected argument "${parsed.positionals[declared.length]}" (usage: ${usageLine(spec)}; quote text that has spaces)`);
    }
    const input: CommandInput = {
      args,
      rest: parsed.positionals.slice(declared.length),
      flags: parsed.values as Record<string, string | boolean | undefined>,
    };
    const home = resolveHome(typeof parsed.values.home === 'string' ? parsed.values.home : undefined, o.env, o.cwd);
    const deps = o.deps ?? systemDeps(o.env);
    const store = new SessionStore(home, deps);
    const code = await spec.run({ home, deps, store, out, json, stdin: o.stdin, signal: o.signal }, input);
    return code ?? EXIT.ok;
  } catch (e) {
    return reportError(out, e);
  }
}

function reportError(out: Output, e: unknown): number {
  if (e instanceof UsageError) {
    out.error('usage', e.message);
    return EXIT.usage;
  }
  if (OpenboaError.is(e)) {
    out.error(e.code, e.message);
    switch (e.code) {
      case 'not_found':
        return EXIT.notFound;
      case 'busy':
        return EXIT.busy;
      case 'invalid_input':
        return EXIT.usage;
      default:
        return EXIT.failure;
    }
  }
  const err = e as Error;
  out.error('runtime_error', err?.message ?? String(e));
  return EXIT.failure;
}
