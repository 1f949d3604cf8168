/**
 * What an event type means, registered by the capability that owns it
 * (kinds/index.ts lists the capabilities). The core keeps the lifecycle of a
 * session (created, updated, runs and their endings, errors, model requests,
 * built-in tool uses and results, user messages and answers); everything
 * else is a kind: how it folds into session.json (store/fold.ts), how it
 * enters the conversation (run/conversation.ts), and whether a running run
 * takes it in at its next step (run/default-hooks.ts, steering). A new event
 * type is a registration, not a new `case` in the centre.
 *
 * Contracts, for every handler: it is a pure function of the snapshot (or
 * the conversation) and the event, so the same log always gives the same
 * state and the same request; it must not throw for an event that passed the
 * schema (the fold and the builder treat a throw as a bug of the kind).
 */
import type { EventType, PendingEvent, SessionEvent, SessionSnapshot } from '../schema/index.js';
import type { Message } from '../model/provider.js';

/** The summary and VITAL lines of the latest compaction, which open the conversation after it. */
export interface CompactedSummary {
  text: string;
  vital: readonly string[];
  /** The agent.thread_context_compacted that carries them. */
  eventId: string;
}

export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;

/** The fold's side of one event type. Provenance (who may write it) is the core's, judged before any of these. */
export interface FoldKind<E extends SessionEvent> {
  /** A user event that takes effect where its line sits and is never pending (a pause): true when this applied it. */
  inPlace?(s: SessionSnapshot, e: E): boolean;
  /** A user event: false drops it silently as a repeat (a delivery taken already); it may record what it admits. */
  admit?(s: SessionSnapshot, e: E): boolean;
  /** A user event: why it cannot be accepted in this state (the line stays, reported as a session.error), or null. */
  judge?(s: SessionSnapshot, e: E, line: number): string | null;
  /** A user event, accepted as pending. */
  accepted?(s: SessionSnapshot, e: E): void;
  /** A runtime event (written by a run, its provenance checked): what it changes. `offset` is its line's byte offset when known. */
  apply?(s: SessionSnapshot, e: E, at: { line: number; offset?: number }): void;
}

/**
 * What the conversation builder lets a kind add. Every method keeps the
 * builder's invariants (tool uses paired with their results, turns closed in
 * order, blocks made well-formed before they are fed).
 */
export interface ConversationSink {
  /** A user-side text where the line sits; `closesTurn`: the assistant's turn ends before it (a note the model must answer). */
  userText(text: string, o?: { closesTurn?: boolean }): void;
  /** An assistant tool use, named as the model called it. */
  toolUse(eventId: string, modelToolUseId: string, name: string, input: unknown): void;
  /** The result of the tool use logged as `useEventId`. */
  toolResult(line: number, result: SessionEvent, useEventId: string, content: ReadonlyArray<{ type: 'text'; text: string }>, isError: boolean): void;
  /** The messages built so far (not the turn in progress), and the log line each began at. */
  turns(): { messages: readonly Message[]; starts: readonly number[] };
  /** Replaces them (a compaction prunes or leaves out old turns; `starts` stays parallel to `messages`). */
  setTurns(messages: Message[], starts: number[]): void;
  /** What opens the conversation from here on, until the next one: a compaction's summary, and the note that carries it. */
  open(summary: CompactedSummary, note: string): void;
}

/** The conversation's side of one event type. */
export interface ConversationKind<E extends SessionEvent> {
  /** A user event's text where a run takes it in (null: it adds nothing). */
  takenIn?(e: E): string | null;
  /** An event that enters where its line sits. */
  enter?(sink: ConversationSink, e: E, line: number): void;
  /** For a tool result: the tool use it answers (so a result that cannot be read is still paired, as an error). */
  answers?(e: E): string;
  /** Its content enters the conversation, so its size must be measurable before it is fed. */
  carriesContent?: boolean;
}

/** A tool use as the tool policy and the guards see it: a built-in's shape, named as the model called it. */
export type ToolUseView = EventOf<'agent.tool_use'>;

export interface EventKind<T extends EventType> {
  fold?: FoldKind<EventOf<T>>;
  conversation?: ConversationKind<EventOf<T>>;
  /** A capability's tool use (an MCP call), as the tool policy sees it: guards keyed on names never mistake it for a built-in. */
  asToolUse?(e: EventOf<T>): ToolUseView;
  /** A user event a running run takes in at its next step (steering), rather than leaving it for the next run. */
  midRun?: boolean;
}

/** One capability's event kinds. */
export interface Capability {
  name: string;
  kinds: { [T in EventType]?: EventKind<T> };
  /** A session.status_running took these pending user events in, in line order (at: its time). */
  takeIn?(s: SessionSnapshot, taken: readonly PendingEvent[], at: string): void;
  /** After a fold: the snapshot's fields this capability derives (never read back as input). */
  finish?(s: SessionSnapshot): void;
}

/** Declares a capability with its kinds type-checked against the event schema. */
export const capability = (c: Capability): Capability => c;
