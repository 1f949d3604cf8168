/**
 * The CLI dispatcher: parses the command line (program.ts), resolves session
 * id prefixes, runs the command, and turns every failure into one line on
 * stderr and an exit code (SPEC §8): 0 success, 1 runtime failure, 2 bad
 * usage or input, 3 not found, 4 busy.
 */
import type { Readable, Writable } from 'node:stream';
import type { Deps } from '../core/foundation/deps.js';
import type { OpenboaError } from '../core/foundation/errors.js';
import { COMMANDS } from './command-catalog.js';
import { Output } from './output.js';
import { UsageError } from './command.js';
import { EXIT } from './exit.js';
import { parseArgv } from './program.js';
import { colorEnabled, columnsOf, type StreamLike } from './terminal.js';

export interface RunOptions {
  stdout: Writable & StreamLike;
  stderr: Writable & StreamLike;
  stdin: Readable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
  deps?: Deps;
}

/** Whether --json is on the command line (before a `--`), known before parsing so even a parse error is JSON. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** Runs the CLI; returns the exit code. Never throws. */
export async function runCli(argv: string[], o: RunOptions): Promise<number> {
  const json = wantsJson(argv);
  const columns = columnsOf(o.stdout, o.env);
  const out = new Output(o.stdout, o.stderr, json, {
    color: { out: colorEnabled(o.stdout, o.env, json), err: colorEnabled(o.stderr, o.env, json) },
    columns,
    ...(o.stdout.isTTY && o.stdout.columns ? { terminalColumns: o.stdout.columns } : {}),
  });
  try {
    const parsed = parseArgv(argv, COMMANDS, { stdout: o.stdout, columns });
    if (parsed.shown) return EXIT.ok;
    const { spec, input } = parsed;
    // Before the command's code loads: loading the daemon's is itself a burst that grows the young generation.
    if (spec.longLived) (await import('./young-generation.js')).holdYoungGeneration();
    // The core and the command's own code load only now, and only what this command imports:
    // help, the version and a mistake in the command line need none of it.
    const [{ resolveHome, notAHome }, { systemDeps }, { SessionStore }, { resolveSessionId, resolveWaitingEventId }, command] = await Promise.all([
      import('../core/foundation/home.js'),
      import('../core/foundation/deps.js'),
      import('../core/store/session-store.js'),
      import('./session-id.js'),
      spec.load(),
    ]);
    const home = resolveHome(parsed.home, o.env, o.cwd);
    const missing = spec.home === 'any' ? null : notAHome(home);
    if (missing) throw (await import('../core/foundation/errors.js')).notFound(`${missing}: not an openboa home (openboa init ${home.root} makes one there; --home DIR or $OPENBOA_HOME picks another)`);
    const deps = o.deps ?? systemDeps(o.env);
    const store = new SessionStore(home, deps);
    // Every command that takes a session id takes a unique part of one (session-id.ts).
    if (input.args.id !== undefined && spec.args?.some((a) => a.name === 'id')) {
      input.args.id = resolveSessionId(store, input.args.id);
      // ...and every command that answers a waiting tool use takes a unique part of its event id.
      for (const name of ANSWERED_EVENT_ARGS) {
        if (input.args[name] !== undefined && store.exists(input.args.id)) input.args[name] = resolveWaitingEventId(store, input.args.id, input.args[name]);
      }
    }
    const code = await command.run({ home, deps, store, out, json: parsed.json, stdin: o.stdin, signal: o.signal, cwd: o.cwd }, input);
    return code ?? EXIT.ok;
  } catch (e) {
    return await reportError(out, e);
  }
}

/** The arguments that name a waiting tool use (confirm, tool-result, resolve). */
const ANSWERED_EVENT_ARGS = ['tool_use_event_id', 'custom_tool_use_event_id', 'event_id'] as const;

/** A core error in the CLI's words: the field as its flag, the answer as the command that gives it. */
function cliWording(e: OpenboaError): string {
  const d = e.data;
  if (d.field) return `--${d.field} ${e.message}`;
  if (d.answer_with === 'confirm') return `${e.message}: openboa confirm ${d.session_id} ${d.event_id} --allow|--deny`;
  if (d.answer_with === 'tool-result') return `${e.message}: openboa tool-result ${d.session_id} ${d.event_id} <text>`;
  return e.message;
}

async function reportError(out: Output, e: unknown): Promise<number> {
  if (e instanceof UsageError) {
    out.error('usage', e.message);
    return EXIT.usage;
  }
  // Loaded only now: an error from the core means the core is loaded already.
  const errors = await import('../core/foundation/errors.js');
  if (errors.OpenboaError.is(e)) {
    out.error(e.code, cliWording(e));
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
