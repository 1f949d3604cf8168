/**
 * The home folder (SPEC §2) and every path in it. Nothing else builds paths
 * by hand, so the layout lives in one place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFINITION_ID, UUID_V7 } from '../schema/format-constants.js';
import { invalidInput, notFound } from './errors.js';

export class Home {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  get agentsDir() {
    return path.join(this.root, 'agents');
  }
  get environmentsDir() {
    return path.join(this.root, 'environments');
  }
  get sessionsDir() {
    return path.join(this.root, 'sessions');
  }

  agentDir(agentId: string) {
    checkDefinitionId(agentId, 'agent');
    return path.join(this.agentsDir, agentId);
  }
  agentFile(agentId: string) {
    return path.join(this.agentDir(agentId), 'agent.yaml');
  }
  environmentFile(envId: string) {
    checkDefinitionId(envId, 'environment');
    return path.join(this.environmentsDir, `${envId}.yaml`);
  }

  session(sessionId: string): SessionPaths {
    if (!UUID_V7.test(sessionId)) throw notFound(`session "${sessionId}" not found (session ids are UUIDv7, e.g. 019a8f6e-...)`);
    return sessionPaths(path.join(this.sessionsDir, sessionId));
  }
}

export interface SessionPaths {
  dir: string;
  snapshot: string;
  events: string;
  wakeQueue: string;
  runtime: string;
  workspace: string;
  /** Files dropped here (written elsewhere, renamed in) are moved into events.jsonl by the runtime. */
  inbox: string;
  /** proper-lockfile's lock directory for the run lease. */
  lease: string;
  /** Who holds the lease (advisory; the lock directory decides). */
  leaseOwner: string;
}

export function sessionPaths(dir: string): SessionPaths {
  return {
    dir,
    snapshot: path.join(dir, 'session.json'),
    events: path.join(dir, 'events.jsonl'),
    wakeQueue: path.join(dir, 'wake-queue.jsonl'),
    runtime: path.join(dir, 'runtime'),
    workspace: path.join(dir, 'workspace'),
    inbox: path.join(dir, 'inbox'),
    lease: path.join(dir, 'lease.lock'),
    leaseOwner: path.join(dir, 'lease.json'),
  };
}

function checkDefinitionId(id: string, what: string) {
  if (!DEFINITION_ID.test(id)) {
    throw invalidInput(`"${id}" is not a valid ${what} id (expected ^[a-z0-9][a-z0-9_-]{0,63}$)`);
  }
}

/**
 * --home, else $OPENBOA_HOME, else the current directory. SPEC §2 lists the
 * variable first; we let the explicit flag win, as every CLI does, so a
 * command line can point at another home without unsetting the variable.
 */
/** Why `home` is not a working home (no such folder, or neither agents/ nor sessions/ in it), or null when it is one. */
export function notAHome(home: Home): string | null {
  let st;
  try {
    st = fs.statSync(home.root);
  } catch {
    return `${home.root} does not exist`;
  }
  if (!st.isDirectory()) return `${home.root} is not a folder`;
  const dir = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  if (!dir(home.agentsDir) && !dir(home.sessionsDir)) return `${home.root} has neither agents/ nor sessions/ in it`;
  return null;
}

export function resolveHome(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Home {
  return new Home(flag || env.OPENBOA_HOME || cwd);
}
