/**
 * Versioned directories (docs/memory.md, "Versions" and "Promotion"): the
 * lines of `agents/<id>/memory.log.jsonl` and `agents/<id>/substrate.log.jsonl`,
 * one per change of a file of `memory/` or `substrate/`, and the input of the
 * built-in `promote` tool. A version's content is stored once, by its
 * sha256, in `memory.versions/` or `substrate.versions/`; the log is
 * append-only (a restore is a new line, never an edit).
 */
import * as z from 'zod';
import { Timestamp } from './common.js';

/**
 * What a line records: `write` (a file's new content, from the file tools or
 * found by the scan), `delete`, `restore` (a person wrote an old version
 * back), `promote` (copied from a session's /workspace), `too_large` (a file
 * over MEMORY_DOCUMENT_MAX_BYTES that bash made: noted, its content not stored),
 * `over_quota` (a new content the scan found past the run's byte budget or
 * the store's quota: its sha256 and size noted, its content not stored),
 * `scan_incomplete` (a marker, path "."; not a change: the scan stopped at a
 * bound, said in `message`, so no deletion was inferred and the rest waits
 * for a later scan).
 */
export const VERSION_OPS = ['write', 'delete', 'restore', 'promote', 'too_large', 'over_quota', 'scan_incomplete'] as const;
export const VersionOp = z.enum(VERSION_OPS);
export type VersionOp = z.infer<typeof VersionOp>;

export const SHA256 = /^[0-9a-f]{64}$/;
export const Sha256 = z.string().regex(SHA256, 'expected 64 lowercase hex digits');

/** The longest path a version line names (characters, as escaped). */
export const VERSION_PATH_MAX = 4096;

/** A file's path inside the versioned directory: relative, "/"-separated, no empty, "." or ".." parts. */
export const VersionPath = z
  .string()
  .min(1)
  .max(VERSION_PATH_MAX)
  .refine((p) => !p.includes('\0') && p.split('/').every((c) => c !== '' && c !== '.' && c !== '..'), 'expected a relative path without empty, "." or ".." parts');

/** The path of a `scan_incomplete` marker: the directory itself. */
export const DIRECTORY_PATH = '.';

export const VersionLine = z
  .strictObject({
    path: z.union([VersionPath, z.literal(DIRECTORY_PATH)]),
    /** The content's sha256 (its file in the content store, except for over_quota); null for delete, too_large and scan_incomplete. */
    sha256: Sha256.nullable(),
    op: VersionOp,
    /** The content's size; null for delete and scan_incomplete. */
    bytes: z.number().int().nonnegative().nullable(),
    /** The session and run that made the change; null for a person's (restore). */
    session_id: z.string().min(1).nullable(),
    wake_id: z.string().min(1).nullable(),
    at: Timestamp,
    /** promote's message; scan_incomplete's reason. */
    message: z.string().max(4000).optional(),
  })
  .superRefine((l, ctx) => {
    const none = l.op === 'delete' || l.op === 'too_large' || l.op === 'scan_incomplete';
    if (none !== (l.sha256 === null)) ctx.addIssue({ code: 'custom', path: ['sha256'], message: none ? `expected null for op ${l.op}` : `expected a sha256 for op ${l.op}` });
    const marker = l.op === 'scan_incomplete';
    if (marker !== (l.path === DIRECTORY_PATH)) ctx.addIssue({ code: 'custom', path: ['path'], message: marker ? `expected "${DIRECTORY_PATH}" for op ${l.op}` : `"${DIRECTORY_PATH}" is only the path of a scan_incomplete marker` });
  });
export type VersionLine = z.infer<typeof VersionLine>;

/** Files one promote call copies at most, and the largest each may be. */
export const PROMOTE_MAX_PATHS = 50;
export const PROMOTE_MAX_FILE_BYTES = 1_000_000;

export const PromoteInput = z.strictObject({
  paths: z
    .array(z.string().min(1).max(4096))
    .min(1)
    .max(PROMOTE_MAX_PATHS)
    .describe('Files under /workspace to copy into /substrate, keeping their path relative to /workspace (e.g. "notes/plan.md" becomes /substrate/notes/plan.md). Files only, not directories.'),
  message: z.string().trim().min(1).max(4000).describe('Why these files are promoted: what they are and why they are safe to share with every later session of this agent.'),
});
export type PromoteInput = z.infer<typeof PromoteInput>;
