/**
 * Cross-session search (docs/memory.md, "Search"): the inputs of the built-in
 * `search_sessions` and `read_session` tools, and the shape of one search
 * hit. The index itself (`<home>/.openboa/search.sqlite`) is derived state,
 * rebuilt from the logs; its tables are described in search/search-db.ts.
 */
import * as z from 'zod';
import { SessionId } from './common.js';

/** The most hits one search returns. */
export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;
/** The longest query accepted (characters); words past the first SEARCH_QUERY_WORDS are ignored. */
export const SEARCH_QUERY_MAX = 1000;
export const SEARCH_QUERY_WORDS = 32;
/** The most events read_session returns on either side of its anchor. */
export const READ_WINDOW_MAX = 50;
export const READ_WINDOW_DEFAULT = 5;

export const SearchSessionsInput = z.strictObject({
  query: z.string().trim().min(1).max(SEARCH_QUERY_MAX).describe('Words to look for (plain words; quotes and operators are taken literally).'),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe(`How many candidates at most (default ${SEARCH_LIMIT_DEFAULT}).`),
});
export type SearchSessionsInput = z.infer<typeof SearchSessionsInput>;

export const ReadSessionInput = z.strictObject({
  session_id: SessionId.describe('A session id from search_sessions.'),
  event_id: z.string().min(1).max(200).optional().describe('The event to center on (from search_sessions); absent: the end of the log.'),
  before: z.number().int().min(0).max(READ_WINDOW_MAX).optional().describe(`Events before the anchor (default ${READ_WINDOW_DEFAULT}).`),
  after: z.number().int().min(0).max(READ_WINDOW_MAX).optional().describe(`Events after the anchor (default ${READ_WINDOW_DEFAULT}).`),
});
export type ReadSessionInput = z.infer<typeof ReadSessionInput>;

/** What an indexed row came from. */
export const SEARCH_KINDS = ['message', 'tool_result', 'outcome', 'learning'] as const;
export const SearchKind = z.enum(SEARCH_KINDS);
export type SearchKind = z.infer<typeof SearchKind>;

/** One candidate (the CLI's --json prints these). A hint: the session's log is the truth. */
export const SearchHit = z.object({
  session_id: z.string(),
  event_id: z.string(),
  agent_id: z.string(),
  kind: SearchKind,
  title: z.string().nullable(),
  snippet: z.string(),
  /** BM25, sign turned so that higher is better; comparable only within one search. */
  score: z.number(),
  created_at: z.string(),
});
export type SearchHit = z.infer<typeof SearchHit>;
