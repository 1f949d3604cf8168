/**
 * The built-in `promote` tool (docs/memory.md, "Promotion"): copies files
 * from the session's /workspace into the agent's substrate
 * (`agents/<id>/substrate/`, every session's read-only /substrate), each
 * copy a version in `substrate.log.jsonl` (op `promote`, with the message)
 * and its content in `substrate.versions/`.
 *
 * Shared change is promoted only when it is safe: the tool is `always_ask`
 * by default (a person confirms each call; agent.yaml
 * `tools.promote.permission` may say otherwise), and it refuses while the
 * session has an outcome that is not over (one being worked on or graded,
 * or one defined and not yet taken in): once the grader says `satisfied`,
 * the outcome is over and promote may run.
 *
 * Files are read through the sandbox (the race-free walk beneath the
 * mounts) and must end under /workspace: a path, or a symlink, that leads
 * to /memory, /runtime, /substrate or elsewhere is refused. Either every
 * file is promoted or none is: all are read before any is written.
 */
import path from 'node:path';
import { PROMOTE_MAX_FILE_BYTES, PromoteInput, VersionPath } from '../schema/index.js';
import { isFailure } from '../sandbox/sandbox.js';
import { replaceBeneath } from '../sandbox/atomic-replace.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { recordContent } from '../memory/memory-dir.js';
import { substrateVersioned } from '../memory/version-store.js';
import { fail, ok, type Tool } from './tool.js';

export const PROMOTE_DESCRIPTION =
  "Copy finished files from /workspace into this agent's shared substrate (/substrate, read-only in every session of this agent), e.g. a reviewed document or a script later sessions should reuse. Each file keeps its path relative to /workspace. A person usually confirms each call; it is refused while an outcome of this session is not yet satisfied. Every promoted file is versioned.";

export const promoteTool: Tool<typeof PromoteInput> = {
  name: 'promote',
  description: PROMOTE_DESCRIPTION,
  input: PromoteInput,
  async run(input, ctx) {
    if (!ctx.agent) return fail("promote needs the session's agent, which this call does not know");
    const snap = ctx.store.snapshot(ctx.sessionId, { persist: false });
    const open = snap.outcome ?? snap.pending_outcomes[0] ?? null;
    if (open) {
      return fail(`promote is refused while this session's outcome ${open.outcome_id} is open (${open.state}): promote only once it is satisfied. Nothing was promoted.`);
    }
    const files: Array<{ rel: string; data: Buffer }> = [];
    const problems: string[] = [];
    for (const p of input.paths) {
      const r = await ctx.sandbox.read(p, { maxBytes: PROMOTE_MAX_FILE_BYTES, signal: ctx.signal });
      if (isFailure(r)) {
        problems.push(r.error);
        continue;
      }
      if (!r.virtual.startsWith('/workspace/')) {
        problems.push(`${p}: resolves to ${r.virtual}, which is not under /workspace; only files of /workspace can be promoted`);
        continue;
      }
      if (r.data === null) {
        problems.push(`${r.virtual}: more than ${PROMOTE_MAX_FILE_BYTES} bytes; a promoted file may hold at most that`);
        continue;
      }
      const rel = r.virtual.slice('/workspace/'.length);
      if (!VersionPath.safeParse(rel).success) {
        problems.push(`${r.virtual}: not a path promote can keep`);
        continue;
      }
      if (!files.some((f) => f.rel === rel)) files.push({ rel, data: r.data });
    }
    if (problems.length) return fail(`Nothing was promoted:\n${problems.map((x) => `- ${x}`).join('\n')}`);

    const v = substrateVersioned(ctx.store.home, ctx.agent.id);
    const vfs = new VirtualFs([{ target: v.target, host: v.dir, writable: true, atomic: true }], { home: v.target });
    const message = ctx.redactor.text(input.message);
    const done: string[] = [];
    for (const f of files) {
      try {
        replaceBeneath(vfs, `${v.target}/${f.rel}`, f.data, { durable: true });
        const line = await recordContent(v, f.rel, f.data, 'promote', { session_id: ctx.sessionId, wake_id: ctx.wakeId }, ctx.clock, message);
        done.push(`${path.posix.join(v.target, f.rel)} (${f.data.length} bytes, sha256 ${line.sha256?.slice(0, 12)})`);
      } catch (e) {
        const why = (e as Error).message;
        return fail(`promote stopped at /workspace/${f.rel}: ${why}.${done.length ? ` Promoted before it:\n${done.map((d) => `- ${d}`).join('\n')}` : ' Nothing was promoted.'}`);
      }
    }
    return ok(`Promoted ${done.length} file${done.length === 1 ? '' : 's'}; every session of this agent sees ${done.length === 1 ? 'it' : 'them'} read-only:\n${done.map((d) => `- ${d}`).join('\n')}`);
  },
};
