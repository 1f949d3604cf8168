/**
 * The history of a definition (docs/format.md, "Definition history"):
 * `agents/<id>/agent.history.jsonl` and `environments/<id>.history.jsonl`,
 * one line per version, append-only. A line carries the sha256 of the YAML
 * file that version is, and the whole envelope the YAML does not hold
 * (the API's `name`, `metadata`, `archived_at`), so the current state is
 * the last line and `created_at` the first line's `at`.
 *
 * A version is counted by content: when the YAML on disk hashes to
 * something the last line does not name, a person edited it, and the next
 * reader records that as a new version (`op: edit`), or as the first one
 * (`op: import`) for a definition written before it had a history.
 */
import * as z from 'zod';
import { Metadata, Timestamp } from './common.js';
import { Sha256 } from './versions.js';


/** A definition's human-readable name (the API's `name`); its id is the file's name. */
export const DefinitionName = z.string().min(1, 'expected a non-empty name').max(256);

export const HISTORY_OPS = ['create', 'update', 'edit', 'import', 'archive'] as const;

export const HistoryLine = z.strictObject({
  /** Counts changes of the definition: 1 for the first line, +1 for each create/update/edit; archive keeps it. */
  version: z.number().int().positive(),
  op: z.enum(HISTORY_OPS),
  /** sha256 of the YAML file's bytes at this version. */
  sha256: Sha256,
  at: Timestamp,
  name: DefinitionName,
  metadata: Metadata,
  archived_at: Timestamp.nullable(),
});
export type HistoryLine = z.infer<typeof HistoryLine>;
