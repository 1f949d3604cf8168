/**
 * Where each user-side block of the conversation came from (an event, its
 * line), kept beside the blocks by identity, and the note that stands for an
 * event the conversation cannot hold. The builder (conversation.ts) tags
 * what it makes; the fitting (fit-window.ts) reads the tags to name what it
 * must leave out.
 */
import { cutHead, wellFormed } from '../foundation/text-cut.js';

/** Where a user-side block of the conversation came from. */
export interface BlockOrigin {
  /** Line in events.jsonl, null when unknown (an event never read). */
  line: number | null;
  eventId: string;
  eventType: string;
  /** The block is a note standing for an event that could not be read or converted. */
  placeholder: boolean;
}

/**
 * Origins of the user-side blocks (message blocks, tool results, notes), by
 * block identity. All blocks of one event share one origin object, so a
 * reader can treat them as one unit. Blocks are never mutated, only copied,
 * so the identity holds until someone copies them.
 */
const origins = new WeakMap<object, BlockOrigin>();

/** Tags a block with where it came from. */
export function tagOrigin(block: object, origin: BlockOrigin): void {
  origins.set(block, origin);
}

/** Where a block came from, when the builder made or took it in; undefined for anything else. */
export function originOf(block: object): BlockOrigin | undefined {
  return origins.get(block);
}

/** One line, at most 200 characters: an error as a note and a session.error can quote it. */
export const reasonOf = (err: unknown) => cutHead((err instanceof Error ? `${err.name}: ${err.message}` : String(err)).replace(/\s+/g, ' '), 200);

/**
 * The note that stands for an event the conversation cannot hold, where it would have entered:
 * its id and line, and why. Deterministic, so the same log gives the same request.
 */
export function placeholderText(eventId: string, line: number | null, eventType: string | null, why: string): string {
  const where = line !== null ? `events.jsonl line ${line}` : 'line unknown';
  return wellFormed(`[openboa: ${eventType ?? 'event'} ${eventId} (${where}) belongs here but is not in this request: ${why}. It is in the session log.]`);
}

