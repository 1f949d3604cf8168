import fs from 'node:fs';
import { invalidInput, notFound } from '../../core/foundation/errors.js';
import { relPath, restoreVersion } from '../../core/memory/memory-dir.js';
import { LatestVersions, memoryVersioned, readContent, readVersions } from '../../core/memory/version-store.js';
import type { VersionLine } from '../../core/schema/index.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { redactForAgent } from '../session-redactor.js';

const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '-');

/** The version of `rel` whose sha256 starts with `prefix` (at least 6 hex digits, and only one). */
function versionAt(lines: VersionLine[], rel: string, prefix: string): VersionLine {
  if (!/^[0-9a-f]{6,64}$/.test(prefix)) throw invalidInput(`expected a sha256 or at least 6 of its first hex digits, got ${JSON.stringify(prefix)}`);
  const found = [...new Set(lines.filter((l) => l.path === rel && l.sha256?.startsWith(prefix)).map((l) => l.sha256!))];
  if (found.length === 0) throw notFound(`no version of ${rel} has sha256 ${prefix}… (openboa memory <agent> log ${rel} lists them)`);
  if (found.length > 1) throw invalidInput(`${prefix} names ${found.length} versions of ${rel}; give more digits`);
  return lines.filter((l) => l.sha256 === found[0]).at(-1)!;
}

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const agent = args.agent!;
  if (!fs.existsSync(ctx.home.agentFile(agent))) throw notFound(`agent ${agent} not found (no ${ctx.home.agentFile(agent)}; openboa agents lists them)`);
  const v = memoryVersioned(ctx.home, agent);
  // Contents, paths and messages: a secret of any session of the agent (a version stored before versions were redacted may hold one).
  const redactor = redactForAgent(ctx, agent);
  const action = args.action ?? 'list';
  const pathArg = (what: string) => {
    if (!args.path) throw new UsageError(`openboa memory ${agent} ${what} needs a path (e.g. MEMORY.md)`);
    const rel = relPath(v, args.path);
    if (rel === null) throw invalidInput(`${JSON.stringify(args.path)} is not a path inside /memory`);
    return rel;
  };
  const read = readVersions(v);
  for (const n of read.notes) ctx.out.warn(`skipped: ${n}`);
  const lines = read.lines.map((l) => l.line);

  if (action === 'list') {
    const latest = new LatestVersions(v).refresh();
    const docs = [...latest.byPath.values()].filter((l) => l.op !== 'delete').sort((a, b) => (a.path < b.path ? -1 : 1));
    if (ctx.json) return ctx.out.data({ agent_id: agent, documents: docs });
    if (docs.length === 0) return ctx.out.line(`no versioned documents yet in ${v.dir}`);
    const { table } = await import('../width.js');
    return ctx.out.line(table(['PATH', 'BYTES', 'SHA256', 'LAST', 'AT', 'SESSION'], docs.map((l) => [l.path, String(l.bytes ?? '-'), short(l.sha256), l.op, l.at.slice(0, 19), l.session_id ?? '(person)'])));
  }
  if (action === 'log') {
    const rel = args.path ? pathArg('log') : null;
    const shown = rel === null ? lines : lines.filter((l) => l.path === rel);
    if (ctx.json) return ctx.out.data({ agent_id: agent, path: rel, versions: shown });
    if (shown.length === 0) return ctx.out.line(rel ? `no versions of ${rel}` : `no versions yet (${v.log})`);
    const { table } = await import('../width.js');
    return ctx.out.line(table(['AT', 'OP', 'PATH', 'SHA256', 'BYTES', 'SESSION', 'WAKE'], shown.map((l) => [l.at.slice(0, 19), l.op, l.path, short(l.sha256), String(l.bytes ?? '-'), l.session_id ?? '(person)', l.wake_id ?? '-'])));
  }
  if (action === 'show') {
    const rel = pathArg('show');
    const at = typeof flags.at === 'string' ? versionAt(lines, rel, flags.at) : lines.filter((l) => l.path === rel).at(-1);
    if (!at) throw notFound(`no versions of ${rel} (openboa memory ${agent} log lists what has some)`);
    if (at.sha256 === null) throw notFound(`${rel} ${at.op === 'delete' ? 'was deleted' : 'was too large to keep'} at ${at.at}; --at SHA shows an earlier version`);
    const data = readContent(v, at.sha256);
    if (!data) throw notFound(`the content ${at.sha256} of ${rel} is missing from ${v.store}`);
    if (ctx.json) return ctx.out.data({ agent_id: agent, path: rel, version: at, content: data.toString('utf8') });
    return ctx.out.line(data.toString('utf8').replace(/\n$/, ''));
  }
  if (action === 'restore') {
    const rel = pathArg('restore');
    if (!args.sha) throw new UsageError(`openboa memory ${agent} restore ${rel} needs the sha256 of the version to restore`);
    const at = versionAt(lines, rel, args.sha);
    const line = await restoreVersion(v, rel, at.sha256!, ctx.deps.clock, redactor);
    if (ctx.json) return ctx.out.data({ agent_id: agent, restored: line });
    return ctx.out.line(`restored ${rel} to ${short(line.sha256)} (from ${at.at}); logged as a restore`);
  }
  throw new UsageError(`unknown action ${JSON.stringify(action)}: expected log, show or restore (or none, to list the documents)`);
}
