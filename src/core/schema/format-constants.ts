/**
 * The plain values of the formats: the id patterns and the format numbers.
 * Part of the schema module (each is re-exported where its format is
 * described: common.ts, events.ts, session.ts), kept in a file of its own
 * that imports nothing, so the few modules that need only these (the home's
 * paths, the log's format check, a one-shot `openboa send`) load no zod.
 */

/** Agent and environment ids (SPEC §2). */
export const DEFINITION_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Session ids are UUIDv7 (time-ordered). */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The format of events.jsonl, carried by its first line (`format`). A log
 * whose first line has none is format 0 (every log written before formats
 * were numbered). Lines of an older format are brought up to this one as
 * they are read (src/core/store/migrations.ts); a newer one is not read.
 */
export const LOG_FORMAT = 1;

/** The format of session.json. 2: outcomes (outcome, pending_outcomes, outcome_evaluations). */
export const SESSION_FORMAT = 2;
