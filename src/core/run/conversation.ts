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
 * - Only the tail of a long log is read (bounded by the context window), so a
 *   session with 100,000 events wakes as fast as a new one; what falls out of
 *   the window is counted in runtime/context.json.
 */
import type { SessionEvent, TextBlock } from '../schema/index.js';
import type { AssistantBlock, Message, ToolResultBlock, UserBlock } from '../model/provider.js';
import type { SessionStore } from '../store/session-store.js';
import { readLines, readLinesBefore, type Cursor } from '../store/jsonl.js';
import { parseEventLine } from '../store/parse-line.js';

export interface LoggedEvent {
  line: number;
  event: SessionEvent;
}

/** The tail of a session's log, kept current as the run appends to it. */
export class LogWindow {
  events: LoggedEvent[] = [];
  /** True when the window starts at line 1 (nothing was left out). */
  fromStart = true;
  private cursor: Cursor;

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    end: Cursor,
    maxBytes: number,
    private readonly now: () => number,
  ) {
    const file = store.paths(sessionId).events;
    const lines = readLinesBefore(file, end, maxBytes);
    this.fromStart = lines.length === 0 || lines[0]?.no === 1;
    this.push(lines);
    this.cursor = end;
    this.refresh();
  }

  /** Reads what was appended since the last read. */
  refresh(): LoggedEvent[] {
    const r = readLines(this.store.paths(this.sessionId).events, this.cursor);
    this.cursor = r.cursor;
    return this.push(r.lines);
  }

  private push(lines: ReturnType<typeof readLines>['lines']): LoggedEvent[] {
    const added: LoggedEvent[] = [];
    const t = this.now();
    for (const raw of lines) {
      const r = parseEventLine(raw, t);
      if (r.kind === 'event') added.push({ line: r.line, event: r.event });
    }
    this.events.push(...added);
    return added;
  }
}

export interface BuiltConversation {
  messages: Message[];
  /** Repairs made so the request is valid (dangling tool uses, cut turns). */
  repairs: string[];
}

function textBlocks(text: string): TextBlock[] {
  return [{ type: 'text', text }];
}

/** Text blocks the API accepts: blank ones dropped; never an empty list. */
function nonBlank(blocks: readonly TextBlock[], fallback: string): TextBlock[] {
  const kept = blocks.filter((b) => b.text.trim() !== '');
  return kept.length ? kept : textBlocks(fallback);
}

function userContentOf(e: SessionEvent, useIds: Map<string, string>): { blocks: UserBlock[]; results: ToolResultBlock[] } {
  switch (e.type) {
    case 'user.message':
      return { blocks: e.content as UserBlock[], results: [] };
    case 'user.define_outcome':
      return {
        blocks: textBlocks(`[outcome defined] ${e.description}\nRubric:\n${e.rubric.content}`),
        results: [],
      };
    case 'user.custom_tool_result': {
      const id = useIds.get(e.custom_tool_use_id);
      if (!id) return { blocks: [], results: [] };
      return { blocks: [], results: [{ type: 'tool_result', tool_use_id: id, content: nonBlank(e.content ?? [], '(no content)'), ...(e.is_error ? { is_error: true } : {}) }] };
    }
    default:
      return { blocks: [], results: [] };
  }
}

/** Builds the Messages API conversation from log events (in log order). */
export function buildConversation(events: readonly LoggedEvent[]): BuiltConversation {
  const messages: Message[] = [];
  const repairs: string[] = [];
  const userEvents = new Map<string, SessionEvent>();
  const useIds = new Map<string, string>(); // agent.tool_use event id -> toolu_ id
  let userBlocks: UserBlock[] = [];
  let results: ToolResultBlock[] = [];
  let assistant: AssistantBlock[] | null = null;

  const flushUser = () => {
    if (userBlocks.length === 0 && results.length === 0) return;
    const content: UserBlock[] = [...results, ...userBlocks];
    const last = messages[messages.length - 1];
    if (last?.role === 'user') last.content.push(...content);
    else messages.push({ role: 'user', content });
    userBlocks = [];
    results = [];
  };
  const closeAssistant = () => {
    if (assistant && assistant.length) {
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant') last.content.push(...assistant);
      else messages.push({ role: 'assistant', content: assistant });
    }
    assistant = null;
  };

  for (const { event: e } of events) {
    switch (e.type) {
      case 'user.message':
      case 'user.define_outcome':
      case 'user.custom_tool_result':
        userEvents.set(e.id, e);
        break;
      case 'session.status_running': {
        for (const id of e.processed_event_ids) {
          const ue = userEvents.get(id);
          if (!ue) continue;
          const c = userContentOf(ue, useIds);
          userBlocks.push(...c.blocks);
          results.push(...c.results);
        }
        for (const w of e.wakes ?? []) userBlocks.push({ type: 'text', text: `[scheduled revisit ${w.id}, due ${w.due_at}] ${w.reason}` });
        break;
      }
      case 'span.model_request_start':
        closeAssistant();
        flushUser();
        assistant = [];
        break;
      case 'agent.message':
        (assistant ??= []).push(...e.content.filter((b) => b.text.trim() !== '').map((b) => ({ type: 'text' as const, text: b.text })));
        break;
      case 'agent.thinking':
        if (e.redacted_data) (assistant ??= []).push({ type: 'redacted_thinking', data: e.redacted_data });
        else if (e.signature) (assistant ??= []).push({ type: 'thinking', thinking: e.thinking ?? '', signature: e.signature });
        break;
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        useIds.set(e.id, e.model_tool_use_id);
        (assistant ??= []).push({ type: 'tool_use', id: e.model_tool_use_id, name: e.name, input: e.input });
        break;
      case 'span.model_request_end':
        closeAssistant();
        break;
      case 'agent.tool_result': {
        closeAssistant();
        const id = useIds.get(e.tool_use_id);
        if (id) results.push({ type: 'tool_result', tool_use_id: id, content: nonBlank(e.content, '(no output)'), ...(e.is_error ? { is_error: true } : {}) });
        break;
      }
      default:
        break;
    }
  }
  closeAssistant();
  flushUser();
  return { messages: repair(messages, repairs), repairs };
}

/**
 * Makes the conversation valid for the Messages API: it starts with a user
 * turn, every tool_use has its tool_result in the next user turn, no
 * tool_result dangles, roles alternate.
 */
function repair(input: Message[], repairs: string[]): Message[] {
  let msgs = input.filter((m) => m.content.length > 0);
  // A window cut can start mid-turn: start at a user turn that is not only tool results.
  let start = 0;
  while (start < msgs.length) {
    const m = msgs[start] as Message;
    if (m.role === 'user' && m.content.some((b) => b.type !== 'tool_result')) break;
    start++;
  }
  if (start > 0) {
    repairs.push(`dropped ${start} leading message(s) cut off by the context window`);
    msgs = msgs.slice(start);
  }
  const out: Message[] = [];
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i] as Message;
    if (m.role === 'user') {
      const prev = out[out.length - 1];
      const allowed = new Set(prev?.role === 'assistant' ? prev.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id) : []);
      const content = m.content.filter((b) => b.type !== 'tool_result' || allowed.has(b.tool_use_id));
      if (content.length < m.content.length) repairs.push(`dropped ${m.content.length - content.length} tool result(s) with no matching tool use`);
      if (content.length) out.push({ role: 'user', content });
      continue;
    }
    out.push(m);
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (uses.length === 0) continue;
    const next = msgs[i + 1];
    const have = new Set(next?.role === 'user' ? next.content.filter((b) => b.type === 'tool_result').map((b) => (b as ToolResultBlock).tool_use_id) : []);
    const missing = uses.filter((id) => !have.has(id));
    if (missing.length) {
      repairs.push(`added an error result for ${missing.length} tool use(s) with no recorded result`);
      const synthetic: ToolResultBlock[] = missing.map((id) => ({ type: 'tool_result', tool_use_id: id, content: textBlocks('no result was recorded for this tool call'), is_error: true }));
      if (next?.role === 'user') next.content.unshift(...synthetic);
      else msgs.splice(i + 1, 0, { role: 'user', content: synthetic });
    }
  }
  // Merge same-role neighbours (left by dropped messages).
  const merged: Message[] = [];
  for (const m of out) {
    const last = merged[merged.length - 1];
    if (last && last.role === m.role) (last.content as unknown[]).push(...m.content);
    else merged.push({ role: m.role, content: [...m.content] } as Message);
  }
  return merged;
}

/** Whether the model has something to answer: the conversation ends with a user turn. */
export function awaitsModel(messages: readonly Message[]): boolean {
  return messages.length > 0 && messages[messages.length - 1]?.role === 'user';
}

/** A rough token estimate (4 characters per token), good enough for budgeting. */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

/**
 * Drops the oldest turns until the conversation fits `budget` tokens. It cuts
 * only before a user turn that holds no tool_result, so no result is ever
 * left without its tool_use. Keeps at least the last such turn.
 */
export function fitToBudget(messages: Message[], budget: number): { messages: Message[]; dropped: number; tokens: number } {
  let start = 0;
  let tokens = estimateTokens(messages);
  const sizes = messages.map((m) => estimateTokens(m));
  while (tokens > budget) {
    // next cut point: a user message (after start) that is not only tool results
    let next = start + 1;
    while (next < messages.length && !(messages[next]?.role === 'user' && messages[next]?.content.every((b) => b.type !== 'tool_result'))) next++;
    if (next >= messages.length) break;
    for (let k = start; k < next; k++) tokens -= sizes[k] ?? 0;
    start = next;
  }
  return { messages: messages.slice(start), dropped: start, tokens };
}
