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
import type { Redactor } from '../foundation/redact.js';
import { cutHead } from '../foundation/text-cut.js';

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

/**
 * The text an event contributes to the index and its kind, or null when it
 * contributes none. Redacted whole, then cut to INDEXED_TEXT_MAX: a secret
 * straddling the cut would otherwise be stored half, where no redaction
 * finds it again.
 */
export function indexedText(e: SessionEvent, redactor: Redactor): { kind: SearchKind; text: string } | null {
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
  return { kind, text: cutHead(redactor.text(text), INDEXED_TEXT_MAX) };
}

function bounded(text: string, max = WINDOW_EVENT_MAX): string {
  return text.length > max ? `${cutHead(text, max)}… [${text.length - max} more characters]` : text;
}

/** What starts every line of a recorded body in read_session's and search_sessions' output. */
export const QUOTE = '│ ';

/**
 * `text` quoted: every line starts with QUOTE, so a recorded body can never
 * forge a header, an end marker or an instruction line of the output.
 */
export function quoted(text: string): string {
  return text
    .split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/)
    .map((l) => QUOTE + l)
    .join('\n');
}

/**
 * One event as read_session shows it: a header line, then its payload,
 * redacted whole, then bounded (a secret straddling the cut would survive
 * as a half), then quoted line by line.
 */
export function windowText(line: number, e: SessionEvent, redactor: Redactor): string {
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
  return body ? `${redactor.text(head)}\n${quoted(bounded(redactor.text(body)))}` : redactor.text(head);
}
