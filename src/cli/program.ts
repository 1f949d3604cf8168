/**
 * The command line, parsed with commander from the CommandSpecs in
 * command-catalog.ts: subcommands, `--help` on every level and `openboa help
 * <command>`, `-V/--version`, and a "did you mean" for a mistyped command or
 * flag. commander only parses here; it never prints an error or exits:
 *
 * - parseArgv returns the command to run and its input, or `{ shown }` when
 *   help or the version was printed (to `stdout`);
 * - every mistake in the command line is thrown as a UsageError whose
 *   message is one line in our own words (exit 2).
 *
 * `--home` and `--json` are defined on the program and again on every
 * command, so they work before and after the command's words.
 */
import { Command, CommanderError, Help } from 'commander';
import type { Writable } from 'node:stream';
import { UsageError, type CommandInput, type CommandSpec, type Flags, type FlagValue } from './command.js';
import { VERSION } from './version.js';

export type ParseResult = { shown: true } | { shown: false; spec: CommandSpec; input: CommandInput; home: string | undefined; json: boolean };

const TAGLINE = 'a filesystem-backed session daemon for long-running agents';
const EXIT_CODES = 'exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 not found, 4 busy';
const HOME_HELP = 'the home folder (default: $OPENBOA_HOME, else the current directory)';
const JSON_HELP = 'machine-readable output; errors as {"error":{"code","message"}}';
const HELP_HELP = 'help for a command';

const SPEC = Symbol('spec');
type Node = Command & { [SPEC]?: CommandSpec };

/** The words of a command below the program, e.g. "session create". */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Commands that run something (not groups), depth first, in the order they were added. */
function leaves(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => (c.commands.length ? leaves(c) : [c]));
}

/** commander's messages, one line each, in our words; the command at hand is named for its help. */
function rephrase(cmd: Command, message: string, code: string | undefined): string {
  const text = message.replace(/^error: /, '');
  const quoted = /'([^']*)'/.exec(text)?.[1] ?? '';
  const did = /\(Did you mean (.+)\?\)/.exec(text)?.[1];
  const suggestion = did ? ` (did you mean ${did}?)` : '';
  const where = pathOf(cmd);
  const helpHint = `see: openboa help${where ? ` ${where}` : ''}`;
  const usage = `usage: openboa ${where ? `${where} ` : ''}${cmd.usage()}`;
  switch (code) {
    case 'commander.unknownOption':
      return `unknown option "${quoted}"${where ? ` for ${where}` : ''}${suggestion}; ${helpHint}`;
    case 'commander.unknownCommand':
      return `unknown command "${[where, quoted].filter(Boolean).join(' ')}"${suggestion}; ${helpHint}`;
    case 'commander.missingArgument':
      return `missing argument <${quoted}> (${usage})`;
    case 'commander.optionMissingArgument': {
      const [flag, value] = quoted.split(' ');
      return `${flag} needs a value${value ? `: ${flag} ${value.replace(/[<>]/g, '')}` : ''} (${usage})`;
    }
    case 'commander.excessArguments': {
      const extra = cmd.args[cmd.registeredArguments.length];
      return `unexpected argument "${extra ?? ''}" (${usage}; quote text that has spaces)`;
    }
    default:
      return `${text.replace(/\s*\n\s*/g, ' ')}${where ? ` (${helpHint})` : ''}`;
  }
}

/** A commander Command that throws our UsageError instead of printing and exiting. */
class OpenboaCommand extends Command {
  override createCommand(name?: string): Command {
    return new OpenboaCommand(name);
  }

  override createHelp(): Help {
    return Object.assign(new OpenboaHelp(), { sortSubcommands: false, sortOptions: false }, this.configureHelp());
  }

  override error(message: string, o?: { code?: string; exitCode?: number }): never {
    throw new UsageError(rephrase(this, message, o?.code));
  }

  /** A group called without its subcommand (`openboa`, `openboa session`) shows its help, on stdout, exit 0. */
  override help(): never {
    this.outputHelp();
    throw new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)');
  }
}

class OpenboaHelp extends Help {
  override styleTitle(title: string): string {
    return title.toLowerCase();
  }

  /** The program and its groups list every command below them by its full words, with `help` last on the program. */
  override visibleCommands(cmd: Command): Command[] {
    const list = leaves(cmd).filter((c) => c.name() !== 'help');
    const help = cmd.commands.find((c) => c.name() === 'help');
    return help ? [...list, help] : list;
  }

  /** A command in a list is named by its words alone (its arguments are in its own help), so the list stays narrow. */
  override subcommandTerm(cmd: Command): string {
    return pathOf(cmd);
  }
}

function optionFlags(name: string, o: NonNullable<CommandSpec['options']>[string]): string {
  return `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` <${o.value ?? 'VALUE'}>` : ''}`;
}

function addGlobals(cmd: Command): Command {
  return cmd.option('--home <DIR>', HOME_HELP).option('--json', JSON_HELP);
}

export interface ProgramIo {
  stdout: Writable;
  /** Width for wrapping help text. */
  columns: number;
}

/** The command tree for `specs`; `pick` receives the chosen leaf when parsing reaches it. */
function buildProgram(specs: readonly CommandSpec[], io: ProgramIo, pick: (cmd: Node) => void): Command {
  const program = new OpenboaCommand('openboa');
  program
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      // Errors never reach here (OpenboaCommand.error throws first); help is asked for on stdout.
      writeErr: (s) => io.stdout.write(s),
      outputError: () => {},
      getOutHelpWidth: () => io.columns,
      getErrHelpWidth: () => io.columns,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
  program.helpCommand(false).helpOption('-h, --help', HELP_HELP).showSuggestionAfterError(true);
  program.usage('<command> [options]').version(VERSION, '-V, --version', 'print the version');
  addGlobals(program);
  program.addHelpText('before', `openboa ${VERSION} — ${TAGLINE}\n`);
  program.addHelpText('after', `\n${EXIT_CODES}\nopenboa help <command> (or openboa <command> --help) shows a command's arguments and options.`);

  for (const spec of specs) {
    let parent: Command = program;
    for (const word of spec.path.slice(0, -1)) {
      parent = parent.commands.find((c) => c.name() === word) ?? parent.command(word).description(`the ${word} commands`).usage('<command> [options]');
    }
    const name = spec.path[spec.path.length - 1] as string;
    const cmd: Node = parent.command(name).description(spec.summary);
    const args = spec.args ?? [];
    args.forEach((a, i) => {
      const variadic = spec.rest === true && i === args.length - 1 ? '...' : '';
      // Every `id` takes a unique part (run.ts resolves it), so every command's help says so.
      const about = a.name === 'id' ? `${a.description} (or a unique part of it, e.g. the last 8 digits)` : a.description;
      cmd.argument(a.required ? `<${a.name}${variadic}>` : `[${a.name}${variadic}]`, about);
    });
    for (const [k, o] of Object.entries(spec.options ?? {})) {
      if (o.repeatable) cmd.option(optionFlags(k, o), o.description, (v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
      else cmd.option(optionFlags(k, o), o.description);
    }
    addGlobals(cmd);
    if (spec.details) cmd.addHelpText('after', `\n${spec.details}`);
    cmd[SPEC] = spec;
    cmd.action((...a: unknown[]) => pick(a[a.length - 1] as Node));
  }

  const help: Node = program.command('help').argument('[command...]', 'the command, e.g. session create').description('help for a command (the same as openboa <command> --help)');
  help.action((...a: unknown[]) => pick(a[a.length - 1] as Node));
  return program;
}

/** The deepest command named by the leading `words`, and how many words that took. */
function findByWords(program: Command, words: readonly string[]): { cmd: Command; used: number } {
  let cmd: Command = program;
  let used = 0;
  for (const w of words) {
    const next = cmd.commands.find((c) => c.name() === w);
    if (!next) break;
    cmd = next;
    used++;
  }
  return { cmd, used };
}

/**
 * Parses argv (without the node and script paths). Throws UsageError for a
 * mistake in the command line; returns `{ shown: true }` when it printed help
 * or the version.
 */
export function parseArgv(argv: readonly string[], specs: readonly CommandSpec[], io: ProgramIo): ParseResult {
  let picked: Node | null = null;
  const program = buildProgram(specs, io, (cmd) => {
    picked = cmd;
  });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) return { shown: true };
    throw e;
  }
  const cmd = picked as Node | null;
  if (!cmd) {
    // commander returns without a command only when it printed help.
    return { shown: true };
  }
  if (cmd.name() === 'help' && !cmd[SPEC]) {
    const words = cmd.args;
    const { cmd: target, used } = findByWords(program, words);
    // A word that names no command under a group: commander says so, with its suggestion (this throws).
    if (used < words.length && target.commands.length > 0) parseArgv(words.slice(0, used + 1), specs, io);
    // Otherwise (words past a command are its arguments) the help of the command named.
    target.outputHelp();
    return { shown: true };
  }
  const spec = cmd[SPEC] as CommandSpec;
  const globals = cmd.optsWithGlobals() as { home?: string; json?: boolean };
  const declared = spec.args ?? [];
  const positionals = cmd.args;
  const args: Record<string, string | undefined> = {};
  declared.forEach((a, i) => {
    args[a.name] = positionals[i];
  });
  const flags: Flags = {};
  for (const k of Object.keys(spec.options ?? {})) {
    const opt = cmd.options.find((o) => o.long === `--${k}`);
    if (opt) flags[k] = cmd.getOptionValue(opt.attributeName()) as FlagValue;
  }
  flags.home = globals.home;
  flags.json = globals.json;
  return {
    shown: false,
    spec,
    input: { args, rest: positionals.slice(declared.length), flags },
    home: globals.home,
    json: globals.json === true,
  };
}
