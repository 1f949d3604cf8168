/**
 * The context window of a long session (docs/context.md): agent.yaml's
 * `context:` settings, the compaction record the conversation is rebuilt
 * from, and the warnings the agent gets as the window fills.
 *
 * A compaction is durable: `agent.thread_context_compacted` carries what the
 * rebuild needs (the summary, the VITAL lines, where the kept turns start,
 * which older turns were pruned), so a restarted daemon rebuilds the same
 * request without calling the model again.
 */
import * as z from 'zod';
import { ModelUsage } from './common.js';

const Fraction = z.number().gt(0).lt(1);

/** agent.yaml `context:`. Every field has a default; the window itself stays limits.context_window_tokens. */
export const ContextSettings = z
  .strictObject({
    /** Compact before a request whose conversation would pass this share of the window. */
    compact_at: Fraction.default(0.75),
    /** What a compaction keeps whole: the newest turns up to this share of the window. */
    keep_recent: Fraction.default(0.25),
    /** Phase 0: thinking blocks kept in the pruned turns (the newest). */
    keep_thinking: z.number().int().nonnegative().default(2),
    /** Phase 1: older tool results longer than this many characters are cut to head + tail + a note. */
    prune_tool_results_over: z.number().int().min(1024).default(8192),
    /** Shares of the window at which the agent is told how full it is, once each between compactions. */
    warn_at: z.array(Fraction).max(5).default([0.5, 0.75, 0.9]),
  })
  .refine((c) => c.keep_recent < c.compact_at, { message: 'expected keep_recent below compact_at', path: ['keep_recent'] });
export type ContextSettings = z.output<typeof ContextSettings>;

/** The fields our compaction adds to Managed Agents' agent.thread_context_compacted. */
export const CompactionFields = {
  summary_path: z.string(),
  tokens_before: z.number().int().nonnegative(),
  tokens_after: z.number().int().nonnegative(),
  /** The summary that opens the requests from here on (phase 2), or the digest it fell back to. */
  summary: z.string().optional(),
  /** VITAL lines of the turns left out (and of earlier summaries), carried verbatim after the summary. */
  vital: z.array(z.string()).optional(),
  /** Turns whose first event lies before this line are left out behind the summary. */
  kept_from_line: z.number().int().positive().optional(),
  /** Phases 0 and 1 apply to the turns whose first event lies before this line. */
  pruned_before_line: z.number().int().positive().optional(),
  /** Thinking blocks kept in the pruned turns (phase 0). */
  keep_thinking: z.number().int().nonnegative().optional(),
  /** Tool results longer than this were cut in the pruned turns (phase 1). */
  prune_over: z.number().int().positive().optional(),
  /** The phases this compaction ran (0, 1, 2). */
  phases: z.array(z.number().int().min(0).max(2)).optional(),
  /** Why the summary is a deterministic digest: the summary request failed. */
  fallback: z.string().optional(),
  /** The summary requests' usage and count. */
  usage: ModelUsage.optional(),
  model_requests: z.number().int().nonnegative().optional(),
  /** What the summary requests cost, USD (schema/pricing.ts). */
  cost_usd: z.number().nonnegative().optional(),
};

/**
 * What a request cut of a compaction's summary and VITAL lines, and why
 * (docs/context.md, "A small window"): they are fitted first, after the
 * system prompt and the tools, and cut only when they alone exceed what the
 * window leaves; the cut is marked in the request, and this says so in the log.
 */
export const ContextCut = z.strictObject({
  /** The compaction whose summary was cut. */
  compaction_event_id: z.string().min(1),
  /** The summary's length, and how much of it was left out (characters). */
  summary_chars: z.number().int().nonnegative(),
  summary_chars_left_out: z.number().int().nonnegative(),
  /** The VITAL lines carried, and how many were left out. */
  vital_lines: z.number().int().nonnegative(),
  vital_lines_left_out: z.number().int().nonnegative(),
  /** Tokens the window leaves for the conversation: window less max_output_tokens, system prompt and tools (may be negative). */
  room: z.number().int(),
  /** Why, in words, with the figures. */
  why: z.string().min(1),
});
export type ContextCut = z.infer<typeof ContextCut>;

/** What a cut left out, in a few words: "left out the summary 1200 of 3000 characters and 2 of 6 VITAL line(s) of compaction sevt_…". */
export function describeContextCut(c: ContextCut): string {
  const parts = [];
  if (c.summary_chars_left_out > 0) parts.push(`the summary ${c.summary_chars_left_out} of ${c.summary_chars} characters`);
  if (c.vital_lines_left_out > 0) parts.push(`${c.vital_lines_left_out} of ${c.vital_lines} VITAL line(s)`);
  return `left out ${parts.join(' and ') || 'nothing'} of compaction ${c.compaction_event_id}`;
}

/**
 * Our own event, one of two kinds: `threshold` (the agent was told how full
 * the window is; rendered as a user note where it sits), or `cut` (a
 * request had to cut the summary or VITAL lines; for people: the request
 * itself marks the cut for the model).
 */
export const ContextWarningFields = {
  /** The threshold passed, as a share of the window. */
  threshold: Fraction.optional(),
  /** The request's estimated tokens (all of it: system prompt, tools, messages). */
  tokens: z.number().int().nonnegative(),
  window: z.number().int().positive(),
  /** Recorded, not said: a higher threshold passed in the same request is the one the agent reads. */
  silent: z.boolean().optional(),
  cut: ContextCut.optional(),
};

/** A context warning is one kind or the other. */
export const oneContextWarningKind = (e: { threshold?: number; cut?: unknown }) => (e.threshold === undefined) !== (e.cut === undefined);
