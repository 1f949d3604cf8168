/**
 * The home a command runs on: --home, else $OPENBOA_HOME, else the folder
 * it is run from (core/foundation/home.ts, resolveHome). Unless the command
 * runs on any folder (init, doctor), one that is not a home is refused
 * (not_found, exit 3) before anything is looked for in it, so a mistyped
 * --home is never an empty home.
 */
import { notAHome, resolveHome, type Home } from '../core/foundation/home.js';
import { notFound } from '../core/foundation/errors.js';

export function commandHome(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string, o: { any?: boolean } = {}): Home {
  const home = resolveHome(flag, env, cwd);
  const missing = o.any ? null : notAHome(home);
  if (missing) throw notFound(`${missing}: not an openboa home (openboa init ${home.root} makes one there; --home DIR or $OPENBOA_HOME picks another)`);
  return home;
}
