/**
 * Whether a command line is the one-shot send that send-lean.ts runs
 * without the full CLI: `openboa [--home DIR] [--json] send [--shared]
 * <id> <text...>` (`--home` and `--json` anywhere, as the full CLI takes
 * them; `-` as the text reads stdin). Decided from argv alone, exactly:
 * anything else, or anything the full parser might read otherwise (another
 * option, `--`, a word that starts with `-`, --home given twice or with a
 * value that looks like an option), is left to the full CLI.
 */

export interface LeanSend {
  home: string | undefined;
  json: boolean;
  shared: boolean;
  id: string;
  /** The text argument and the words after it (textArgument). */
  text: string;
  rest: string[];
}

/**
 * The send `argv` asks for, or null for the full CLI. `OPENBOA_FULL_CLI=1`
 * in the environment sends every command line to the full CLI: the tests
 * run a send both ways and compare.
 */
export function leanSendForm(argv: readonly string[], env: NodeJS.ProcessEnv): LeanSend | null {
  if (env.OPENBOA_FULL_CLI === '1') return null;
  let home: string | undefined;
  let json = false;
  let shared = false;
  let send = false;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--json') json = true;
    else if (a === '--home' || a.startsWith('--home=')) {
      const value = a === '--home' ? argv[++i] : a.slice('--home='.length);
      if (home !== undefined || value === undefined || value.startsWith('-')) return null;
      home = value;
    } else if (a === '--shared' && send) shared = true;
    else if (a.startsWith('-') && a !== '-') return null;
    else if (send) words.push(a);
    else if (a === 'send') send = true;
    else return null;
  }
  const [id, text, ...rest] = words;
  if (id === undefined || text === undefined) return null;
  return { home, json, shared, id, text, rest };
}
