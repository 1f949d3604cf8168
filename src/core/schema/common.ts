/**
 * Shared building blocks of every on-disk format: ids, timestamps, content
 * blocks. This folder (`src/core/schema/`) is the single source of truth for
 * the formats; types are inferred from it and `docs/format.md` describes it.
 */
import * as z from 'zod';
import { DEFINITION_ID, UUID_V7 } from './format-constants.js';

export { DEFINITION_ID, UUID_V7 } from './format-constants.js';

/** Agent and environment ids (SPEC §2). */
export const DefinitionId = z
  .string()
  .regex(DEFINITION_ID, 'expected a lowercase id matching ^[a-z0-9][a-z0-9_-]{0,63}$');

/** Session ids are UUIDv7 (time-ordered). */
export const SessionId = z.string().regex(UUID_V7, 'expected a UUIDv7 session id');

/**
 * A session's metadata, as Managed Agents has it: at most 16 pairs, keys of
 * 1 to 64 characters, values of at most 512.
 */
export const MAX_METADATA_PAIRS = 16;
export const Metadata = z
  .record(z.string().min(1).max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= MAX_METADATA_PAIRS, `expected at most ${MAX_METADATA_PAIRS} metadata pairs`);
export type Metadata = z.infer<typeof Metadata>;

/** The metadata after a patch (a session.updated's: null removes a key); a patch that would pass 16 pairs keeps the first 16. */
export function patchMetadata(m: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const out = { ...m };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return Object.fromEntries(Object.entries(out).slice(0, MAX_METADATA_PAIRS));
}

/** RFC 3339 timestamp with an explicit offset, e.g. 2026-11-21T10:00:00.000Z. */
export const Timestamp = z.iso.datetime({ offset: true });

export const TextBlock = z.object({
  type: z.literal('text'),
  text: z.string(),
});
export type TextBlock = z.infer<typeof TextBlock>;

const MediaSource = z.looseObject({ type: z.string() });

export const ImageBlock = z.looseObject({ type: z.literal('image'), source: MediaSource });
export const DocumentBlock = z.looseObject({ type: z.literal('document'), source: MediaSource });

/** The Messages API refuses empty text blocks, so a person's text must say something. */
const UserTextBlock = z.object({
  type: z.literal('text'),
  text: z.string().refine((t) => t.trim() !== '', 'expected non-empty text'),
});

/** Blocks a person may send: text, image, document. */
export const UserContentBlock = z.discriminatedUnion('type', [UserTextBlock, ImageBlock, DocumentBlock]);
export type UserContentBlock = z.infer<typeof UserContentBlock>;

/**
 * `content` as written by a person: a plain string is shorthand for one text
 * block. Always normalised to an array of blocks.
 */
export const UserContent = z
  .union([
    z.string().refine((t) => t.trim() !== '', 'expected non-empty text'),
    z.array(UserContentBlock).min(1, 'expected at least one content block'),
  ], { error: 'expected a non-empty string or an array of content blocks ({type: "text", text} ...)' })
  .transform((c): UserContentBlock[] => (typeof c === 'string' ? [{ type: 'text', text: c }] : c));

export const TextContent = z
  .union([z.string(), z.array(TextBlock)], { error: 'expected a string or an array of text blocks ({type: "text", text})' })
  .transform((c): TextBlock[] => (typeof c === 'string' ? [{ type: 'text', text: c }] : c));

/** Token usage of one model request; all four numbers, 0 when unknown. */
export const ModelUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative(),
});
export type ModelUsage = z.infer<typeof ModelUsage>;

/** A session's (or a session tree's) usage: its requests' ModelUsage summed, their number, and their cost. */
export const Usage = ModelUsage.extend({
  model_requests: z.number().int().nonnegative(),
  /** USD, the sum of every recorded request's cost_usd (schema/pricing.ts). */
  cost_usd: z.number().nonnegative().default(0),
});
export type Usage = z.infer<typeof Usage>;

export const ZERO_USAGE: ModelUsage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

