/**
 * The CLI dispatcher: parses the command line (program.ts), resolves session
 * id prefixes, runs the command, and turns every failure into one line on
 * stderr and an exit code (SPEC §8): 0 success, 1 runtime failure, 2 bad
 * usage or input, 3 not found, 4 busy.
 */
import type { Readable, Writable } from 'node:stream';
import type { Deps } from '../core/foundation/deps.js';
import { COMMANDS } from './command-catalog.js';
import { outputFor } from './output.js';
import { EXIT } from './exit.js';
import { parseArgv } from './program.js';
import { reportError } from './report-error.js';
import type { StreamLike } from './terminal.js';

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
  const out = outputFor(o.stdout, o.stderr, o.env, wantsJson(argv));
  try {
    const parsed = parseArgv(argv, COMMANDS, { stdout: o.stdout, columns: out.columns });
    if (parsed.shown) return EXIT.ok;
    const { spec, input } = parsed;
    // Before the command's code loads: loading the daemon's is itself a burst that grows the young generation.
    if (spec.longLived) (await import('./young-generation.js')).holdYoungGeneration();
    // The core and the command's own code load only now, and only what this command imports:
    // help, the version and a mistake in the command line need none of it.
    const [{ commandHome }, { systemDeps }, { SessionStore }, { resolveSessionId, resolveWaitingEventId }, command] = await Promise.all([
      import('./command-home.js'),
      import('../core/foundation/deps.js'),
      import('../core/store/session-store.js'),
      import('./session-id.js'),
      spec.load(),
    ]);
    const home = commandHome(parsed.home, o.env, o.cwd, { any: spec.home === 'any' });
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
