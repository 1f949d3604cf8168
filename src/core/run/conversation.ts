/**
 * The conversation, rebuilt from the log into Messages API form.
 *
 * - Assistant content is echoed back as the model sent it: the block events
 *   between a span.model_request_start and its end, in order.
 * - A user event enters the conversation where a session.status_running took
 *   it in (its `processed_event_ids`), not where its line sits, so a message
 *   appended mid-run can never split a tool_use from its tool_result, and an
 *   event enters exactly once however often the log is reread.
 * - tool_use and tool_result are paired by the model's `toolu_` id, looked up
 *   from the agent.tool_use event the result names.
 *
 * The builder is a fold: events are fed once, in log order, and the messages
 * so far can be viewed at any time. Messages are never mutated once built
 * (a merge makes a new object), so their token estimates (token-budget.ts)
 * can be cached by identity and the repair that makes a view valid
 * (message-repair.ts) can resume where the last view left off; that keeps a
 * long session's rebuild proportional to what is new.
 *
 * Feeding never throws. An event that cannot be converted (anything that
 * throws while it is taken in or while its size is estimated) is skipped:
 * where it would have entered, a short note names it instead (user content,
 * tool results), and it is listed in `problems` for the run to report.
 *
 * Every string of an event is made well-formed as it is fed (a lone UTF-16
 * surrogate becomes U+FFFD), and so are the ids callers pass in: the Messages
 * API refuses a lone surrogate with a 400 that is never retried, and a line
 * like {"type":"user.message","content":"\ud83d"} would otherwise end the
 * session's conversation for good. Done once per event, where it enters, the
 * request stays a function of the log and each request extends the last.
 */
import { isUserEventType, type SessionEvent, type TextBlock } from '../schema/index.js';
import type { AssistantBlock, Message, ToolResultBlock, UserBlock } from '../model/provider.js';
import { wellFormed, wellFormedDeep } from '../foundation/text-cut.js';
import { repairIncremental, type RepairState } from './message-repair.js';
import { estimateTokens, fitToBudget } from './token-budget.js';
import { conversationKind } from '../kinds/index.js';
import { originOf, placeholderText, reasonOf, tagOrigin, type BlockOrigin } from './block-origin.js';

export { originOf, placeholderText, type BlockOrigin };
import type { CompactedSummary, ConversationSink } from '../kinds/event-kind.js';

export type { CompactedSummary };

export interface LoggedEvent {
  line: number;
  event: SessionEvent;
}

/** An event the builder could not convert; the run reports it once (session.error naming the line). */
export interface ConversionProblem {
  line: number;
  eventId: string;
  message: string;
}

/** Lines of problems kept (the newest); each is reported once, so older ones were reported already. */
const MAX_PROBLEMS = 100;

export interface ConversationView {
  messages: Message[];
  /** Estimated tokens of `messages`. */
  tokens: number;
  /** Repairs made so the request is valid (dangling tool uses, cut turns). */
  repairs: string[];
  /**
   * The note that opens `messages` since a compaction (its first block, by
   * identity: `messages[0].content[0]`) and what it holds; null before any.
   * Fitting the window keeps it before anything else (fit-window.ts).
   */
  opening: { block: TextBlock; summary: CompactedSummary } | null;
}

function textBlocks(text: string): TextBlock[] {
  return [{ type: 'text', text }];
}

/** Text blocks the API accepts: blank ones dropped; never an empty list. */
function nonBlank(blocks: readonly TextBlock[], fallback: string): TextBlock[] {
  const kept = blocks.filter((b) => b.text.trim() !== '');
  return kept.length ? kept : textBlocks(fallback);
}

/** How many tool-use ids to remember for pairing results (results come soon after their use). */
const MAX_USE_IDS = 4096;

/** The core's event types whose content enters the conversation, and so must be measurable (a kind says so of its own: carriesContent). */
const CARRIES_CONTENT = new Set<string>(['user.message', 'user.custom_tool_result', 'agent.message', 'agent.thinking', 'agent.tool_use', 'agent.custom_tool_use', 'agent.tool_result']);
const carriesContent = (type: string) => CARRIES_CONTENT.has(type) || conversationKind(type)?.carriesContent === true;

export class ConversationBuilder {
  private msgs: Message[] = [];
  /** The log line being fed when each message of `msgs` began (a compaction names turns by it). */
  private starts: number[] = [];
  private feeding = 0;
  /** The latest compaction's summary and VITAL lines, and the note that carries them: they open the view. */
  private opening: { summary: CompactedSummary; note: string } | null = null;
  /** User events fed and not yet taken in (every user type, so the builder knows their ids). */
  private userEvents = new Map<string, LoggedEvent>();
  /** Notes for events that will be taken in but cannot be read or converted, by event id. */
  private notes = new Map<string, { text: string; origin: BlockOrigin }>();
  private failed = new Map<number, ConversionProblem>();
  private useIds = new Map<string, string>(); // agent.tool_use event id -> toolu_ id
  private userBlocks: UserBlock[] = [];
  private results: ToolResultBlock[] = [];
  private assistant: AssistantBlock[] | null = null;

  /** What a capability's event kind may add (kinds/event-kind.ts), through the builder's own steps. */
  private readonly sink: ConversationSink = {
    userText: (text, o) => {
      if (o?.closesTurn) this.closeAssistant();
      this.userBlocks.push({ type: 'text', text });
    },
    toolUse: (eventId, modelToolUseId, name, input) => this.addToolUse(eventId, modelToolUseId, name, input),
    toolResult: (line, result, useEventId, content, isError) => this.addToolResult(line, result, useEventId, content, isError),
    turns: () => ({ messages: this.msgs, starts: this.starts }),
    setTurns: (messages, starts) => {
      this.msgs = messages;
      this.starts = starts;
      this.memo = null;
    },
    open: (summary, note) => {
      this.opening = { summary, note };
    },
  };

  get size(): number {
    return this.msgs.length;
  }

  private push(m: Message) {
    const last = this.msgs[this.msgs.length - 1];
    if (last && last.role === m.role) this.msgs[this.msgs.length - 1] = { role: m.role, content: [...last.content, ...m.content] } as Message;
    else (this.msgs.push(m), this.starts.push(this.feeding));
  }

  /** The built messages (not the turn in progress) and the log line each began at. */
  committed(): { messages: readonly Message[]; starts: readonly number[] } {
    return { messages: this.msgs, starts: this.starts };
  }

  /** The summary that opens the conversation since the latest compaction, if any. */
  get compactedSummary(): CompactedSummary | null {
    return this.opening?.summary ?? null;
  }

  private flushUser() {
    if (this.userBlocks.length === 0 && this.results.length === 0) return;
    this.push({ role: 'user', content: [...this.results, ...this.userBlocks] });
    this.userBlocks = [];
    this.results = [];
  }

  private closeAssistant() {
    if (this.assistant && this.assistant.length) this.push({ role: 'assistant', content: this.assistant });
    this.assistant = null;
  }

  /** Events fed that could not be converted (the newest MAX_PROBLEMS), oldest first. */
  get problems(): readonly ConversionProblem[] {
    return [...this.failed.values()];
  }

  /** Whether an event with this id was fed (or noted) and not taken in yet. */
  knows(id: string): boolean {
    id = wellFormed(id);
    return this.userEvents.has(id) || this.notes.has(id);
  }

  /**
   * Registers a note for an event a later session.status_running takes in but
   * that the caller could not read (it lies too far back in the log). The
   * note enters where the event would have.
   */
  noteUnread(eventId: string, line: number | null, why: string): void {
    eventId = wellFormed(eventId);
    const origin: BlockOrigin = { line, eventId, eventType: 'event', placeholder: true };
    this.notes.set(eventId, { text: placeholderText(eventId, line, null, why), origin });
  }

  /** Records an event that failed to convert; returns the reason for its note. */
  private fail(line: number, e: SessionEvent, err: unknown): string {
    const reason = reasonOf(err);
    this.failed.delete(line);
    this.failed.set(line, { line, eventId: e.id, message: `events.jsonl line ${line}: ${e.type} ${e.id} could not be converted into the conversation (${reason}); a note names it there instead, and the line stays in the log` });
    if (this.failed.size > MAX_PROBLEMS) this.failed.delete(this.failed.keys().next().value as number);
    return `it could not be converted (${reason})`;
  }

  /** The blocks a user event adds where it is taken in: [tool results, other blocks]. May throw. */
  private userContent(line: number, e: SessionEvent): [ToolResultBlock[], UserBlock[]] {
    const origin: BlockOrigin = { line, eventId: e.id, eventType: e.type, placeholder: false };
    const tag = <T extends object>(b: T): T => (tagOrigin(b, origin), b);
    switch (e.type) {
      case 'user.message':
        return [[], (e.content as UserBlock[]).map(tag)];
      case 'user.custom_tool_result': {
        const id = this.useIds.get(e.custom_tool_use_id);
        if (!id) return [[], []];
        return [[tag({ type: 'tool_result', tool_use_id: id, content: nonBlank(e.content ?? [], '(no content)'), ...(e.is_error ? { is_error: true } : {}) })], []];
      }
      default: {
        // A capability's user event says its own words (an outcome's brief, a child's report).
        const text = conversationKind(e.type)?.takenIn?.(e) ?? null;
        return [[], text === null ? [] : textBlocks(text).map(tag)];
      }
    }
  }

  /** Takes in one user event where a session.status_running names it. */
  private takeIn(id: string) {
    const ue = this.userEvents.get(id);
    if (ue) {
      this.userEvents.delete(id); // it enters once
      let parts: [ToolResultBlock[], UserBlock[]];
      try {
        parts = this.userContent(ue.line, ue.event);
      } catch (err) {
        const why = this.fail(ue.line, ue.event, err);
        parts = [[], [this.noteBlock(placeholderText(ue.event.id, ue.line, ue.event.type, why), { line: ue.line, eventId: ue.event.id, eventType: ue.event.type, placeholder: true })]];
      }
      // One push per block: a spread of a huge block list would overflow the call stack.
      for (const r of parts[0]) this.results.push(r);
      for (const b of parts[1]) this.userBlocks.push(b);
      return;
    }
    const note = this.notes.get(id);
    if (note) {
      this.notes.delete(id);
      this.userBlocks.push(this.noteBlock(note.text, note.origin));
    }
  }

  private noteBlock(text: string, origin: BlockOrigin): TextBlock {
    const b: TextBlock = { type: 'text', text };
    tagOrigin(b, origin);
    return b;
  }

  /**
   * Folds one event in. Never throws: an event that fails to convert is
   * skipped, named by a note where it would have entered, and listed in
   * `problems`.
   */
  feed(line: number, e: SessionEvent): void {
    this.feeding = line;
    try {
      if (carriesContent(e.type)) estimateTokens(e); // its size must be measurable, or it cannot be sent
      e = wellFormedDeep(e);
      this.apply(line, e);
    } catch (err) {
      const why = this.fail(line, e, err);
      const eventId = wellFormed(e.id); // `e` may not have been made well-formed yet
      const origin: BlockOrigin = { line, eventId, eventType: e.type, placeholder: true };
      const answers = e.type === 'agent.tool_result' ? e.tool_use_id : conversationKind(e.type)?.answers?.(e);
      if (isUserEventType(e.type) && carriesContent(e.type)) {
        this.notes.set(eventId, { text: placeholderText(eventId, line, e.type, why), origin });
      } else if (answers !== undefined) {
        const id = this.useIds.get(wellFormed(answers));
        if (id) this.results.push(this.tagResult({ type: 'tool_result', tool_use_id: id, content: textBlocks(placeholderText(e.id, line, e.type, why)), is_error: true }, origin));
      }
    }
  }

  private tagResult(b: ToolResultBlock, origin: BlockOrigin): ToolResultBlock {
    tagOrigin(b, origin);
    return b;
  }

  private apply(line: number, e: SessionEvent): void {
    if (isUserEventType(e.type)) {
      // Held until a session.status_running takes it in: it enters there, once.
      this.userEvents.set(e.id, { line, event: e });
      return;
    }
    switch (e.type) {
      case 'session.status_running':
        for (const id of e.processed_event_ids) this.takeIn(id);
        for (const w of e.wakes ?? []) this.userBlocks.push({ type: 'text', text: `[scheduled revisit ${w.id}, due ${w.due_at}] ${w.reason}` });
        // The run's note (time, run, why, pending revisits) closes its user turn: stored in the log, so a rebuild is identical.
        if (e.context && !e.continuation) this.userBlocks.push({ type: 'text', text: e.context });
        break;
      case 'span.model_request_start':
        this.closeAssistant();
        this.flushUser();
        this.assistant = [];
        break;
      case 'agent.message':
        for (const b of e.content) if (b.text.trim() !== '') (this.assistant ??= []).push({ type: 'text', text: b.text });
        break;
      case 'agent.thinking':
        if (e.redacted_data) (this.assistant ??= []).push({ type: 'redacted_thinking', data: e.redacted_data });
        else if (e.signature) (this.assistant ??= []).push({ type: 'thinking', thinking: e.thinking ?? '', signature: e.signature });
        break;
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        this.addToolUse(e.id, e.model_tool_use_id, e.name, e.input);
        break;
      case 'span.model_request_end':
        this.closeAssistant();
        break;
      case 'agent.tool_result':
        this.addToolResult(line, e, e.tool_use_id, e.content, e.is_error);
        break;
      default:
        // Every other event enters as its capability says (kinds/index.ts), or not at all.
        conversationKind(e.type)?.enter?.(this.sink, e, line);
        break;
    }
  }

  private addToolUse(eventId: string, modelToolUseId: string, name: string, input: unknown): void {
    this.useIds.set(eventId, modelToolUseId);
    if (this.useIds.size > MAX_USE_IDS) this.useIds.delete(this.useIds.keys().next().value as string);
    (this.assistant ??= []).push({ type: 'tool_use', id: modelToolUseId, name, input: input as Record<string, unknown> });
  }

  private addToolResult(line: number, result: SessionEvent, useEventId: string, content: ReadonlyArray<{ type: 'text'; text: string }>, isError: boolean): void {
    this.closeAssistant();
    const id = this.useIds.get(useEventId);
    if (id) this.results.push(this.tagResult({ type: 'tool_result', tool_use_id: id, content: nonBlank(content as TextBlock[], '(no output)'), ...(isError ? { is_error: true } : {}) }, { line, eventId: result.id, eventType: result.type, placeholder: false }));
  }

  private memo: RepairState | null = null;

  /** The conversation so far, valid for the Messages API. Does not change what was fed. */
  view(): ConversationView {
    const msgs = [...this.msgs];
    const add = (m: Message) => {
      const last = msgs[msgs.length - 1];
      if (last && last.role === m.role) msgs[msgs.length - 1] = { role: m.role, content: [...last.content, ...m.content] } as Message;
      else msgs.push(m);
    };
    if (this.assistant && this.assistant.length) add({ role: 'assistant', content: [...this.assistant] });
    if (this.userBlocks.length || this.results.length) add({ role: 'user', content: [...this.results, ...this.userBlocks] });
    let opening: ConversationView['opening'] = null;
    if (this.opening) {
      // The summary opens the conversation: the same text, in the same place, until the next compaction.
      const note: TextBlock = { type: 'text', text: this.opening.note };
      opening = { block: note, summary: this.opening.summary };
      const first = msgs[0];
      if (first && first.role === 'user') msgs[0] = { role: 'user', content: [note, ...first.content] };
      else msgs.unshift({ role: 'user', content: [note] });
    }
    const repairs: string[] = [];
    const r = repairIncremental(msgs, this.memo, repairs);
    this.memo = { marks: r.marks, out: r.out };
    return { messages: r.messages, tokens: r.tokens, repairs, opening };
  }

  /**
   * Forgets the oldest messages, keeping the newest that fit `keepTokens`
   * (cut before a user turn without tool results), to bound memory in a
   * long-lived process. What is forgotten is still in the log.
   */
  trim(keepTokens: number): number {
    const fit = fitToBudget(this.msgs, keepTokens);
    if (fit.dropped) {
      this.msgs = fit.messages;
      this.starts = this.starts.slice(fit.dropped);
      this.memo = null;
    }
    return fit.dropped;
  }
}

/** Builds the conversation of a list of logged events (in log order). */
export function buildConversation(events: readonly LoggedEvent[]): ConversationView {
  const b = new ConversationBuilder();
  for (const { line, event } of events) b.feed(line, event);
  return b.view();
}
