/**
 * Agents and environments as versioned resources (docs/format.md,
 * "Definition history"; the HTTP API's /v1/agents and /v1/environments):
 * retrieve, list, create, update with an expected version, archive.
 *
 * The YAML stays what people edit; the history journal beside it counts
 * versions by content (a hand edit is recorded as a version by the next
 * reader) and holds what the YAML does not (name, metadata, archived_at).
 *
 * Every change, and every recording of a hand edit, happens under one lock
 * for the home's definitions (`.openboa/definitions.lock`, the same
 * proper-lockfile lock as a session's lease, so a holder killed with -9 is
 * taken over): the version compared and the version written are read and
 * written inside it, so two processes updating from the same version
 * cannot both win. A read whose journal already names the YAML on disk
 * takes no lock.
 *
 * A change edits the YAML as a document (the `yaml` package's Document),
 * so the comments and layout of the keys it does not touch are kept, and
 * validates the result with the definition's schema before anything is
 * written: errors name the file, the line and the field.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { AgentDefinition, EnvironmentDefinition, type HistoryLine, type Metadata } from '../schema/index.js';
import type { Home } from '../foundation/home.js';
import type { Deps } from '../foundation/deps.js';
import { iso } from '../foundation/clock.js';
import { OpenboaError, busy, conflict, invalidInput, notFound } from '../foundation/errors.js';
import { acquireLease } from '../foundation/lease.js';
import { parseYaml, listAgents, listEnvironments } from './definitions.js';
import { appendHistory, commitPending, openDefinition, readFileAt, readHistory, recoverPending, sha256, writePending, type DefinitionFiles, type DefinitionKind } from './definition-files.js';

export type { DefinitionKind } from './definition-files.js';

export interface DefinitionRuntime {
  home: Home;
  deps: Pick<Deps, 'clock'>;
}

/** One definition as the API shows it: the YAML (text and parsed) and the envelope the history holds. */
export interface DefinitionState {
  kind: DefinitionKind;
  id: string;
  /** The YAML's path relative to the home. */
  file: string;
  text: string;
  def: AgentDefinition | EnvironmentDefinition;
  version: number;
  name: string;
  metadata: Metadata;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** How long a change waits for another process's change to finish before answering busy. */
export const DEFINITIONS_LOCK_WAIT_MS = 5_000;

export async function retrieveDefinition(rt: DefinitionRuntime, kind: DefinitionKind, id: string): Promise<DefinitionState> {
  const found = await observe(rt, kind, id);
  if (!found) throw notFound(`${kind} "${id}" not found`);
  return found;
}

export interface ListOptions {
  limit: number;
  /** The id of the last item of the previous page (ids in name order). */
  after?: string | undefined;
  includeArchived?: boolean;
  createdGte?: string | undefined;
  createdLte?: string | undefined;
}

/** A page of definitions in id order, and the id to continue after (null on the last page). */
export async function listDefinitions(rt: DefinitionRuntime, kind: DefinitionKind, o: ListOptions): Promise<{ data: DefinitionState[]; next: string | null }> {
  const ids = kind === 'agent' ? listAgents(rt.home) : listEnvironments(rt.home);
  const data: DefinitionState[] = [];
  for (const id of ids) {
    if (o.after !== undefined && id <= o.after) continue;
    const s = await observe(rt, kind, id);
    if (!s) continue; // removed since the listing
    if (s.archived_at !== null && !o.includeArchived) continue;
    if (o.createdGte !== undefined && Date.parse(s.created_at) < Date.parse(o.createdGte)) continue;
    if (o.createdLte !== undefined && Date.parse(s.created_at) > Date.parse(o.createdLte)) continue;
    if (data.length === o.limit) return { data, next: data.at(-1)!.id };
    data.push(s);
  }
  return { data, next: null };
}

export interface CreateInput {
  name: string;
  metadata: Metadata;
  /** Fills the new, empty YAML document. */
  build: (doc: YAML.Document) => void;
}

/** Creates `agents/<id>/agent.yaml` or `environments/<id>.yaml`, the id made from the name (a suffix when taken). */
export async function createDefinition(rt: DefinitionRuntime, kind: DefinitionKind, input: CreateInput): Promise<DefinitionState> {
  const doc = new YAML.Document({});
  input.build(doc);
  const text = String(doc);
  const base = slug(input.name, kind);
  validate(kind, text, kind === 'agent' ? `agents/${base}/agent.yaml` : `environments/${base}.yaml`);
  return withDefinitionsLock(rt, async () => {
    const id = claimId(rt.home, kind, base);
    const f = openDefinition(rt.home, kind, id);
    if (!f) throw new Error(`${kind} folder for "${id}" vanished while being created`);
    try {
      const at = iso(rt.deps.clock.now());
      writePending(f, text);
      appendHistory(f, { version: 1, op: 'create', sha256: sha256(text), at, name: input.name, metadata: input.metadata, archived_at: null });
      commitPending(f);
      return stateOf(f, text, readHistory(f));
    } finally {
      f.close();
    }
  });
}

export interface UpdateInput {
  /** The version the change was made from; a different current version is a conflict. Absent: unconditional. */
  expectedVersion?: number | undefined;
  name?: string | undefined;
  /** Keys set to a string are upserted, to null removed. */
  metadata?: Record<string, string | null> | undefined;
  /** Edits the YAML document in place (keys it does not touch keep their comments). */
  edit?: ((doc: YAML.Document) => void) | undefined;
}

/** Applies a change; a change that changes nothing makes no new version. */
export async function updateDefinition(rt: DefinitionRuntime, kind: DefinitionKind, id: string, input: UpdateInput): Promise<DefinitionState> {
  return withDefinitionsLock(rt, async () => {
    const { f, state } = observeLocked(rt, kind, id);
    try {
      if (input.expectedVersion !== undefined && input.expectedVersion !== state.version) {
        throw conflict(`${state.file} is at version ${state.version}, not ${input.expectedVersion}: retrieve it and apply the change again`);
      }
      if (state.archived_at !== null) throw invalidInput(`${kind} "${id}" is archived and can no longer be changed`);
      let text = state.text;
      if (input.edit) {
        const doc = YAML.parseDocument(state.text);
        input.edit(doc);
        text = String(doc);
        validate(kind, text, state.file);
      }
      const metadata = { ...state.metadata };
      for (const [k, v] of Object.entries(input.metadata ?? {})) {
        if (v === null) delete metadata[k];
        else metadata[k] = v;
      }
      const name = input.name ?? state.name;
      if (text === state.text && name === state.name && sameRecord(metadata, state.metadata)) return state;
      const line: HistoryLine = { version: state.version + 1, op: 'update', sha256: sha256(text), at: iso(rt.deps.clock.now()), name, metadata, archived_at: null };
      if (text !== state.text) {
        writePending(f, text);
        appendHistory(f, line);
        commitPending(f);
      } else {
        appendHistory(f, line);
      }
      return stateOf(f, text, readHistory(f));
    } finally {
      f.close();
    }
  });
}

/** Marks the definition archived (its YAML stays; the version is unchanged). Archiving twice changes nothing. */
export async function archiveDefinition(rt: DefinitionRuntime, kind: DefinitionKind, id: string): Promise<DefinitionState> {
  return withDefinitionsLock(rt, async () => {
    const { f, state } = observeLocked(rt, kind, id);
    try {
      if (state.archived_at !== null) return state;
      const at = iso(rt.deps.clock.now());
      appendHistory(f, { version: state.version, op: 'archive', sha256: sha256(state.text), at, name: state.name, metadata: state.metadata, archived_at: at });
      return stateOf(f, state.text, readHistory(f));
    } finally {
      f.close();
    }
  });
}

/** The definition's state, recording a hand edit (or a first sight) under the lock when the journal does not name the YAML on disk. */
async function observe(rt: DefinitionRuntime, kind: DefinitionKind, id: string): Promise<DefinitionState | null> {
  const f = openDefinition(rt.home, kind, id);
  if (!f) return null;
  try {
    const history = readHistory(f);
    const text = readFileAt(f, f.yamlName);
    if (text === null && history.length === 0) return null;
    if (text !== null && history.at(-1)?.sha256 === sha256(text)) return stateOf(f, text, history);
  } finally {
    f.close();
  }
  return withDefinitionsLock(rt, async () => {
    try {
      const { f: g, state } = observeLocked(rt, kind, id);
      g.close();
      return state;
    } catch (e) {
      if (OpenboaError.is(e) && e.code === 'not_found') return null;
      throw e;
    }
  });
}

/** Under the lock: finishes a crashed change, records what the journal does not name yet, and returns the open files with the state. */
function observeLocked(rt: DefinitionRuntime, kind: DefinitionKind, id: string): { f: DefinitionFiles; state: DefinitionState } {
  const f = openDefinition(rt.home, kind, id);
  if (!f) throw notFound(`${kind} "${id}" not found`);
  try {
    let history = readHistory(f);
    recoverPending(f, history);
    const text = readFileAt(f, f.yamlName);
    if (text === null) throw notFound(`${kind} "${id}" not found: ${f.display} does not exist`);
    const last = history.at(-1);
    const hash = sha256(text);
    if (!last || last.sha256 !== hash) {
      const at = iso(rt.deps.clock.now());
      appendHistory(
        f,
        last
          ? { ...last, version: last.version + 1, op: 'edit', sha256: hash, at }
          : { version: 1, op: 'import', sha256: hash, at, name: id, metadata: {}, archived_at: null },
      );
      history = readHistory(f);
    }
    return { f, state: stateOf(f, text, history) };
  } catch (e) {
    f.close();
    throw e;
  }
}

function stateOf(f: DefinitionFiles, text: string, history: readonly HistoryLine[]): DefinitionState {
  const first = history[0];
  const last = history.at(-1);
  if (!first || !last) throw new Error(`${f.display}: no history to read the state from`);
  return {
    kind: f.kind,
    id: f.id,
    file: f.display,
    text,
    def: validate(f.kind, text, f.display),
    version: last.version,
    name: last.name,
    metadata: last.metadata,
    created_at: first.at,
    updated_at: last.at,
    archived_at: last.archived_at,
  };
}

function validate(kind: DefinitionKind, text: string, display: string): AgentDefinition | EnvironmentDefinition {
  return kind === 'agent' ? parseYaml(text, AgentDefinition, display) : parseYaml(text, EnvironmentDefinition, display);
}

/** Runs `fn` holding the home's definitions lock, waiting up to DEFINITIONS_LOCK_WAIT_MS for another holder. */
export async function withDefinitionsLock<T>(rt: DefinitionRuntime, fn: () => Promise<T>): Promise<T> {
  const dir = path.join(rt.home.root, '.openboa');
  fs.mkdirSync(dir, { recursive: true });
  const paths = { dir: rt.home.root, lease: path.join(dir, 'definitions.lock'), leaseOwner: path.join(dir, 'definitions.lock.json') };
  const deadline = rt.deps.clock.now() + DEFINITIONS_LOCK_WAIT_MS;
  let lease;
  for (;;) {
    try {
      lease = await acquireLease(paths, { purpose: 'definitions', nowIso: iso(rt.deps.clock.now()), what: "this home's definitions" });
      break;
    } catch (e) {
      if (!(OpenboaError.is(e) && e.code === 'busy')) throw e;
      if (rt.deps.clock.now() >= deadline) throw busy(e.message);
      // A change holds the lock for a few file writes: look again soon.
      await rt.deps.clock.sleep(Math.min(e.retryAfterMs ?? 20, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await lease.release();
  }
}

/** A free id from the name: lowercase letters, digits, "_" and "-", with "-2", "-3"... when taken. */
function claimId(home: Home, kind: DefinitionKind, base: string): string {
  for (let n = 1; n <= 1000; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const id = base.slice(0, 64 - suffix.length) + suffix;
    if (kind === 'agent') {
      fs.mkdirSync(home.agentsDir, { recursive: true });
      try {
        fs.mkdirSync(home.agentDir(id));
        return id;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    } else {
      fs.mkdirSync(home.environmentsDir, { recursive: true });
      const taken = [`${id}.yaml`, `${id}.history.jsonl`].some((n) => fs.lstatSync(path.join(home.environmentsDir, n), { throwIfNoEntry: false }));
      if (!taken) return id;
    }
  }
  throw conflict(`no free ${kind} id for "${base}"`);
}

function slug(name: string, kind: DefinitionKind): string {
  const s = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, 64);
  return s === '' ? kind : s;
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
