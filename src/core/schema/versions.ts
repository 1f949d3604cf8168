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
 * over MEMORY_DOCUMENT_MAX_BYTES that bash made: noted, its content not stored).
 */
export const VERSION_OPS = ['write', 'delete', 'restore', 'promote', 'too_large'] as const;
export const VersionOp = z.enum(VERSION_OPS);
export type VersionOp = z.infer<typeof VersionOp>;

export const SHA256 = /^[0-9a-f]{64}$/;
export const Sha256 = z.string().regex(SHA256, 'expected 64 lowercase hex digits');

/** A file's path inside the versioned directory: relative, "/"-separated, no empty, "." or ".." parts. */
export const VersionPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0') && p.split('/').every((c) => c !== '' && c !== '.' && c !== '..'), 'expected a relative path without empty, "." or ".." parts');

export const VersionLine = z
  .strictObject({
    path: VersionPath,
    /** The content's sha256 (its file in the content store); null for delete and too_large. */
    sha256: Sha256.nullable(),
    op: VersionOp,
    /** The content's size; null for delete. */
    bytes: z.number().int().nonnegative().nullable(),
    /** The session and run that made the change; null for a person's (restore). */
    session_id: z.string().min(1).nullable(),
    wake_id: z.string().min(1).nullable(),
    at: Timestamp,
    /** promote's message. */
    message: z.string().max(4000).optional(),
  })
  .superRefine((l, ctx) => {
    const none = l.op === 'delete' || l.op === 'too_large';
    if (none !== (l.sha256 === null)) ctx.addIssue({ code: 'custom', path: ['sha256'], message: none ? `expected null for op ${l.op}` : `expected a sha256 for op ${l.op}` });
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
