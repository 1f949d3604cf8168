/**
 * Loading agent and environment definitions (SPEC §3). Every read validates
 * with zod; an error names the file (relative to the home), the line when
 * the YAML parser knows it, the field path and what was expected.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML, { LineCounter } from 'yaml';
import type * as z from 'zod';
import { AgentDefinition, EnvironmentDefinition, Script } from '../schema/index.js';
import type { Home } from '../foundation/home.js';
import { invalidInput, notFound } from '../foundation/errors.js';
import { checkRoster } from '../delegation/roster.js';

export interface LoadedAgent {
  id: string;
  dir: string;
  file: string;
  def: AgentDefinition;
  /** AGENTS.md, appended to the system prompt, when present. */
  instructions: string | null;
}

export interface LoadedEnvironment {
  id: string;
  file: string;
  def: EnvironmentDefinition;
}

/** Parses YAML text against a schema; errors say `<file>:<line>: <field>: <what>`. */
export function parseYaml<S extends z.ZodType>(text: string, schema: S, displayPath: string): z.output<S> {
  const lc = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const pos = lc.linePos(first.pos[0]);
    const msg = first.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? first.message;
    throw invalidInput(`${displayPath}:${pos.line}:${pos.col}: YAML syntax error: ${msg}`);
  }
  const value: unknown = doc.toJS() ?? {};
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => {
    // Unknown keys are reported on the parent; name them.
    const keys = i.code === 'unrecognized_keys' ? (i as { keys?: string[] }).keys ?? [] : [];
    const p = [...i.path, ...(keys.length === 1 ? keys : [])].map(String);
    const where = p.length ? p.join('.') : '(top level)';
    const at = nodeStart(doc, i.path as (string | number)[], keys.length === 1 ? keys[0] : undefined);
    const line = at === null ? '' : `:${lc.linePos(at).line}`;
    const what = i.code === 'unrecognized_keys' ? `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}` : i.message;
    return { line, text: `${where}: ${what}` };
  });
  const head = issues[0];
  throw invalidInput(`${displayPath}${head?.line ?? ''}: ${issues.map((x) => x.text).join('; ')}`);
}

/** Offset of the YAML node at `path` (or of its key `key`), when the document has it. */
function nodeStart(doc: YAML.Document, path: (string | number)[], key?: string): number | null {
  const node = doc.getIn(path, true) as unknown;
  if (key !== undefined && YAML.isMap(node)) {
    const pair = node.items.find((it) => YAML.isScalar(it.key) && it.key.value === key);
    const k = pair?.key as { range?: [number, number, number] } | undefined;
    if (k?.range) return k.range[0];
  }
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  return range && path.length > 0 ? range[0] : null;
}

/**
 * Parsed definitions, keyed by file and its (mtime, size): a daemon rereads a
 * definition only when it changed, and every read still validates.
 */
const parsed = new Map<string, { stamp: string; value: unknown }>();

function cachedParse<S extends z.ZodType>(file: string, what: string, home: Home, schema: S): z.output<S> {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file);
  } catch {
    st = undefined;
  }
  const stamp = st ? `${st.mtimeMs}:${st.size}:${st.ino}` : '';
  const hit = parsed.get(file);
  if (st && hit && hit.stamp === stamp) return hit.value as z.output<S>;
  const value = parseYaml(readText(file, what, home), schema, rel(home, file));
  if (stamp) parsed.set(file, { stamp, value });
  return value;
}

function readText(file: string, what: string, home: Home): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`${what} not found: ${rel(home, file)} does not exist`);
    throw new Error(`cannot read ${rel(home, file)}: ${(e as Error).message}`);
  }
}

export function rel(home: Home, file: string): string {
  const r = path.relative(home.root, file);
  return r.startsWith('..') ? file : r;
}

export function loadAgent(home: Home, agentId: string): LoadedAgent {
  const file = home.agentFile(agentId);
  const def = cachedParse(file, `agent "${agentId}"`, home, AgentDefinition);
  checkRoster(home, agentId, def, file, rel(home, file));
  const dir = home.agentDir(agentId);
  let instructions: string | null = null;
  try {
    instructions = fs.readFileSync(path.join(dir, 'AGENTS.md'), 'utf8');
  } catch {
    instructions = null;
  }
  return { id: agentId, dir, file, def, instructions };
}

export function loadEnvironment(home: Home, envId: string): LoadedEnvironment {
  const file = home.environmentFile(envId);
  const def = cachedParse(file, `environment "${envId}"`, home, EnvironmentDefinition);
  return { id: envId, file, def };
}

/** A scripted agent's script, resolved relative to the agent folder. */
export function loadScript(home: Home, agent: LoadedAgent): Script {
  if (!agent.def.script) throw invalidInput(`${rel(home, agent.file)}: script: expected a script file for provider scripted`);
  const file = path.resolve(agent.dir, agent.def.script);
  return cachedParse(file, `script of agent "${agent.id}"`, home, Script);
}

export function listAgents(home: Home): string[] {
  try {
    return fs
      .readdirSync(home.agentsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && fs.existsSync(path.join(home.agentsDir, d.name, 'agent.yaml')))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Ids of environments/<id>.yaml, sorted; [] when there is no environments/ folder. */
export function listEnvironments(home: Home): string[] {
  try {
    return fs
      .readdirSync(home.environmentsDir, { withFileTypes: true })
      .filter((d) => !d.isDirectory() && d.name.endsWith('.yaml'))
      .map((d) => path.basename(d.name, '.yaml'))
      .sort();
  } catch {
    return [];
  }
}
