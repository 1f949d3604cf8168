/**
 * What of a session's events the search index holds, and how read_session
 * shows an event to the model.
 *
 * Indexed (one row each): messages (user.message, agent.message, and the
 * messages between sessions), tool results (agent.tool_result,
 * user.custom_tool_result) and outcome evaluation explanations
 * (span.outcome_evaluation_end). Everything else (spans, statuses, tool
 * inputs, thinking) is not: it is reachable by read_session around a hit.
 */
import type { SessionEvent, SearchKind } from '../schema/index.js';
import { cutHead } from '../text-cut.js';

/**
 * The most text one row holds, characters. A longer tool result is indexed
 * by its head: the index stays about the size of the conversations, not of
 * every file a tool printed; read_session rereads the whole event.
 */
export const INDEXED_TEXT_MAX = 16_000;

/** The most text read_session shows of one event, characters (its head, then a note). */
export const WINDOW_EVENT_MAX = 2_000;

function textOf(blocks: ReadonlyArray<{ type: string; text?: string }> | string | undefined): string {
  if (typeof blocks === 'string') return blocks;
  return (blocks ?? [])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

/** The text an event contributes to the index and its kind, or null when it contributes none. */
export function indexedText(e: SessionEvent): { kind: SearchKind; text: string } | null {
  let kind: SearchKind;
  let text: string;
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
    case 'agent.thread_message_sent':
    case 'agent.thread_message_received':
      kind = 'message';
      text = textOf(e.content);
      break;
    case 'agent.tool_result':
    case 'user.custom_tool_result':
      kind = 'tool_result';
      text = textOf(e.content);
      break;
    case 'span.outcome_evaluation_end':
      kind = 'outcome';
      text = `${e.result}: ${e.explanation}`;
      break;
    default:
      return null;
  }
  text = text.trim();
  if (text === '') return null;
  return { kind, text: cutHead(text, INDEXED_TEXT_MAX) };
}

function bounded(text: string, max = WINDOW_EVENT_MAX): string {
  return text.length > max ? `${cutHead(text, max)}… [${text.length - max} more characters]` : text;
}

/** One event as read_session shows it: a header line, then its payload (bounded). */
export function windowText(line: number, e: SessionEvent): string {
  const head = `--- line ${line} · ${e.created_at} · ${e.type} · ${e.id}`;
  let body: string;
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
    case 'agent.thread_message_sent':
    case 'agent.thread_message_received':
      body = textOf(e.content);
      break;
    case 'agent.tool_use':
    case 'agent.custom_tool_use':
      body = `${e.name} ${JSON.stringify(e.input)}`;
      break;
    case 'agent.tool_result':
      body = `${e.is_error ? '(error) ' : ''}${textOf(e.content)}`;
      break;
    case 'user.custom_tool_result':
      body = `${e.is_error ? '(error) ' : ''}${textOf(e.content)}`;
      break;
    case 'user.tool_confirmation':
      body = `${e.result} ${e.tool_use_id}${e.deny_message ? `: ${e.deny_message}` : ''}`;
      break;
    case 'span.outcome_evaluation_end':
      body = `${e.result}: ${e.explanation}`;
      break;
    case 'user.define_outcome':
      body = e.description;
      break;
    case 'session.created':
      body = `agent ${e.agent_id}${e.title ? `, "${e.title}"` : ''}`;
      break;
    case 'session.error':
      body = `${e.error.type}: ${e.error.message}`;
      break;
    case 'session.status_idle':
      body = e.stop_reason.type;
      break;
    default:
      body = '';
  }
  return body ? `${head}\n${bounded(body)}` : head;
}
