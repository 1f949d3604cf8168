/**
 * The built-in `promote` tool (docs/memory.md, "Promotion"): copies files
 * from the session's /workspace into the agent's substrate
 * (`agents/<id>/substrate/`, every session's read-only /substrate), each
 * copy a version in `substrate.log.jsonl` (op `promote`, with the message)
 * and its content in `substrate.versions/`.
 *
 * Shared change is promoted only when it is safe: the tool is `always_ask`
 * by default (a person confirms each call; agent.yaml
 * `tools.promote.permission` may say otherwise), and it refuses unless the
 * session's most recent outcome, when it has had one, ended `satisfied`:
 * one being worked on or graded, one defined and not yet taken in, and one
 * that ended otherwise (failed, max_iterations_reached, interrupted) all
 * refuse it.
 *
 * Files are read through the sandbox (the race-free walk beneath the
 * mounts) and must end under /workspace: a path, or a symlink, that leads
 * to /memory, /runtime, /substrate or elsewhere is refused. All are read,
 * their contents stored and their log lines built and checked before
 * /substrate changes, so a bad path, a message the log cannot hold or a
 * store that cannot be written promotes nothing. Then, under the log's
 * lock, each file's line is appended before its rename: a line whose
 * rename did not happen (the disk failed in between) names stored content
 * and is harmless; a file in /substrate that no line explains is what this
 * order rules out.
 */
import path from 'node:path';
import { iso } from '../foundation/clock.js';
import { PROMOTE_MAX_FILE_BYTES, PromoteInput, VersionLine, VersionPath, type SessionSnapshot } from '../schema/index.js';
import { isFailure } from '../sandbox/sandbox.js';
import { replaceBeneath } from '../sandbox/atomic-replace.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { appendVersion, sha256Of, storeContent, substrateVersioned, withLogLock, type LatestVersions, type VersionedDir } from '../memory/version-store.js';
import { dirMemo } from '../memory/dir-memo.js';
import { MEMORY_STORE_MAX_BYTES, MEMORY_STORE_MAX_CONTENTS } from '../memory/memory-scan.js';
import { describeIssues } from '../store/parse-line.js';
import { fail, ok, type Tool } from './tool.js';

/** The longest message a version line holds (VersionLine's bound); a longer one (redaction lengthens it) is cut. */
export const PROMOTE_MESSAGE_MAX = 4000;

/** `text` cut to at most `max` UTF-16 units, ending in "…" when cut, never between the halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** The substrate's store at most, as its log counts it: the same bounds as memory's store. */
export const SUBSTRATE_QUOTA = { bytes: MEMORY_STORE_MAX_BYTES, contents: MEMORY_STORE_MAX_CONTENTS };

/**
 * Why storing `files` would take the substrate's store past `quota`, or
 * null. Only contents the store does not hold yet count (a content is
 * stored once), and the whole call is refused rather than part of it, so a
 * promote is all or nothing here too. Checked before the log's lock, so K
 * sessions of the agent promoting at the same instant may together pass it
 * by K − 1 calls' files (50 × 1 MB each): a bound on runaway growth, not an
 * exact ledger.
 */
export function substrateQuotaRefusal(v: VersionedDir, files: ReadonlyArray<{ data: Buffer }>, quota = SUBSTRATE_QUOTA): string | null {
  let latest: LatestVersions;
  try {
    // The log read on from where this process last stopped (dir-memo.ts), not from its start at every call.
    latest = dirMemo(v).latest.refresh();
  } catch (e) {
    return `Nothing was promoted: the substrate's log could not be read: ${(e as Error).message}`;
  }
  const fresh = new Map<string, number>();
  for (const f of files) {
    const sha = sha256Of(f.data);
    if (!latest.stored.has(sha)) fresh.set(sha, f.data.length);
  }
  const bytes = latest.storedBytes + [...fresh.values()].reduce((a, b) => a + b, 0);
  const contents = latest.stored.size + fresh.size;
  if (bytes <= quota.bytes && contents <= quota.contents) return null;
  return `Nothing was promoted: the substrate's store holds ${latest.storedBytes} bytes in ${latest.stored.size} contents, and this promote would take it to ${bytes} bytes in ${contents} (at most ${quota.bytes} bytes and ${quota.contents} contents).`;
}

/** Why promote is refused in this session now, or null: the most recent outcome, if any, must have ended satisfied. */
export function outcomeRefusal(snap: SessionSnapshot): string | null {
  const open = snap.outcome ?? snap.pending_outcomes[0] ?? null;
  if (open) return `promote is refused while this session's outcome ${open.outcome_id} is open (${open.state}): promote only once it is satisfied. Nothing was promoted.`;
  const last = snap.outcome_evaluations.at(-1);
  if (last && last.result !== 'satisfied') {
    return `promote is refused: this session's most recent outcome ${last.outcome_id} ended ${last.result}, not satisfied; promote only after an outcome is satisfied (a new outcome that is satisfied allows it again). Nothing was promoted.`;
  }
  return null;
}

export const PROMOTE_DESCRIPTION =
  "Copy finished files from /workspace into this agent's shared substrate (/substrate, read-only in every session of this agent), e.g. a reviewed document or a script later sessions should reuse. Each file keeps its path relative to /workspace. A person usually confirms each call; it is refused while an outcome of this session is not yet satisfied. Every promoted file is versioned.";

export const promoteTool: Tool<typeof PromoteInput> = {
  name: 'promote',
  description: PROMOTE_DESCRIPTION,
  input: PromoteInput,
  async run(input, ctx) {
    if (!ctx.agent) return fail("promote needs the session's agent, which this call does not know");
    const refused = outcomeRefusal(ctx.store.snapshot(ctx.sessionId, { persist: false }));
    if (refused) return fail(refused);
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
    const overQuota = substrateQuotaRefusal(v, files);
    if (overQuota) return fail(overQuota);
    // Redacted, then cut: a redaction mark is longer than the secret it replaces.
    const message = cut(ctx.redactor.text(input.message), PROMOTE_MESSAGE_MAX);
    const at = iso(ctx.clock.now());
    // Everything that can fail before /substrate changes: each content stored (durable), each line built and checked.
    const planned: Array<{ rel: string; bytes: number; line: VersionLine }> = [];
    for (const f of files) {
      let sha: string;
      try {
        sha = storeContent(v, f.data);
      } catch (e) {
        return fail(`Nothing was promoted: /workspace/${f.rel} could not be stored: ${(e as Error).message}`);
      }
      const line = VersionLine.safeParse({ path: f.rel, sha256: sha, op: 'promote', bytes: f.data.length, session_id: ctx.sessionId, wake_id: ctx.wakeId, at, message });
      if (!line.success) return fail(`Nothing was promoted: /workspace/${f.rel} cannot be logged: ${describeIssues(line.error)}`);
      planned.push({ rel: f.rel, bytes: f.data.length, line: line.data });
    }
    const data = new Map(files.map((f) => [f.rel, f.data]));
    const vfs = new VirtualFs([{ target: v.target, host: v.dir, writable: true, atomic: true }], { home: v.target });
    // Under the log's lock, so two promotes of one file log and rename in the same order.
    const done = await withLogLock(v, () => {
      const out: string[] = [];
      for (const p of planned) {
        try {
          appendVersion(v, p.line);
          replaceBeneath(vfs, `${v.target}/${p.rel}`, data.get(p.rel)!, { durable: true });
          out.push(`${path.posix.join(v.target, p.rel)} (${p.bytes} bytes, sha256 ${p.line.sha256})`);
        } catch (e) {
          return { stopped: p.rel, why: (e as Error).message, out };
        }
      }
      return { stopped: null, why: '', out };
    });
    const list = done.out.map((d) => `- ${d}`).join('\n');
    if (done.stopped !== null) {
      return fail(`promote stopped at /workspace/${done.stopped}: ${done.why}.${done.out.length ? ` Promoted before it:\n${list}` : ' Nothing was promoted.'}`);
    }
    return ok(`Promoted ${done.out.length} file${done.out.length === 1 ? '' : 's'}; every session of this agent sees ${done.out.length === 1 ? 'it' : 'them'} read-only:\n${list}`);
  },
};
