import { describeEvent, gradedBy, viewEvents, type EventView } from '../../core/views/event-view.js';
import { mcpToolName, outcomeIdOf, type SessionEvent } from '../../core/schema/index.js';
import type { CliContext, CommandInput } from '../command.js';
import { wholeNumberFlag } from '../flags.js';
import { redactFor } from '../session-redactor.js';

/** Where the text of a line starts under --full: under the event's type, so a long message reads as a block. */
const INDENT = ' '.repeat(7);

function textOf(blocks: ReadonlyArray<{ type: string; text?: string }> | undefined): string {
  return (blocks ?? []).map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join('\n');
}

/** The whole text an event carries, for --full; describeEvent's short form for events that carry none. */
function fullText(e: SessionEvent): string {
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
      return textOf(e.content);
    case 'agent.tool_result':
    case 'agent.mcp_tool_result':
      return `${e.is_error ? 'error: ' : ''}${textOf(e.content)}`;
    case 'user.custom_tool_result':
      return `${e.custom_tool_use_id}${e.is_error ? ' (error)' : ''}: ${textOf(e.content)}`;
    case 'agent.tool_use':
    case 'agent.custom_tool_use':
      return `${e.name} ${JSON.stringify(e.input, null, 2)}`;
    case 'agent.mcp_tool_use':
      return `${mcpToolName(e.mcp_server_name, e.name)} ${JSON.stringify(e.input, null, 2)}`;
    case 'user.interrupt':
      return e.reason ?? '';
    case 'user.tool_confirmation':
      return `${e.result} ${e.tool_use_id}${e.deny_message ? `: ${e.deny_message}` : ''}`;
    case 'user.define_outcome':
      return `${outcomeIdOf(e.id)} ${e.description}\n(${gradedBy(e)})${e.rubric ? `\n${e.rubric.content}` : ''}`;
    case 'session.error':
      return `${e.error.type}${e.error.code ? `/${e.error.code}` : ''} (${e.error.retry_status.type}): ${e.error.message}`;
    case 'session.status_terminated':
      return e.reason;
    case 'session.status_rescheduled':
      return `${e.reason}; retry at ${e.retry_at}`;
    case 'span.outcome_evaluation_end':
      return `${e.outcome_id} evaluation ${e.iteration + 1}: ${e.result}: ${e.explanation}`;
    default:
      return describeEvent(e);
  }
}

type Clip = (text: string, width: number) => string;

/** Types longer than this push their text right; most fit. */
const TYPE_WIDTH = 24;

/** `2026-11-21T10:00:03.104Z` as `11-21 10:00:03Z`: the compact view's time (UTC, like the log). */
const shortTime = (iso: string) => `${iso.slice(5, 10)} ${iso.slice(11, 19)}Z`;

/**
 * Whether a person answers this event by its id (`openboa confirm` /
 * `tool-result`): the compact view keeps those ids, in front of the text,
 * where the clip cannot reach them.
 */
const answeredById = (e: SessionEvent) => e.type === 'agent.custom_tool_use' || ((e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use') && e.evaluated_permission === 'ask');

/**
 * One event as text.
 *
 * The default view is compact, one line per event clipped to the terminal's
 * width: line number, time, type, a short description (event ids only on
 * the tool uses a person answers). --full is the whole record: the full
 * timestamp, every event id, and each event's whole text, its later lines
 * indented under the first.
 */
function render(ctx: CliContext, v: EventView, full: boolean, clip: Clip): string {
  const line = String(v.line).padStart(5);
  if (full) {
    const text =
      'invalid' in v
        ? `${line}  ${'INVALID'.padEnd(24)}  ${v.invalid.message}`
        : `${line}  ${v.undated ? '(no time)'.padEnd(24) : v.event.created_at}  ${v.event.type.padEnd(26)}  ${v.event.id}  ${fullText(v.event)}${suffix(v)}`;
    return text.replace(/\r?\n/g, `\n${INDENT}`).trimEnd();
  }
  const text =
    'invalid' in v
      ? `${line}  ${'INVALID'.padEnd(15)}  ${v.invalid.message}`
      : `${line}  ${v.undated ? '(no time)'.padEnd(15) : shortTime(v.event.created_at)}  ${v.event.type.padEnd(TYPE_WIDTH)}  ${answeredById(v.event) ? `${v.event.id} ` : ''}${describeEvent(v.event)}${suffix(v)}`;
  // Redact before clipping, so a secret cut in half is still hidden.
  return clip(ctx.out.redactor.text(text.replace(/\s*\n\s*/g, ' ').trimEnd()), ctx.out.columns);
}

/** What the log says about the event beyond its payload: not taken in yet, or rejected. */
function suffix(v: Extract<EventView, { event: unknown }>): string {
  const pending = v.event.type.startsWith('user.') && v.event.processed_at === null ? ' (pending)' : '';
  return `${pending}${v.error ? `  [rejected: ${v.error}]` : ''}`;
}

function print(ctx: CliContext, v: EventView, full: boolean, clip: Clip) {
  ctx.out.result(v, () => render(ctx, v, full, clip));
}

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  const limit = wholeNumberFlag(flags, 'limit', { example: 20 }) ?? Infinity;
  const full = flags.full === true;
  const clip: Clip = ctx.json || full ? (t) => t : (await import('../width.js')).clipToWidth;
  ctx.store.require(id);
  redactFor(ctx, id);
  const first = ctx.store.readEvents(id);
  const all = viewEvents(first.lines);
  for (const v of limit === Infinity ? all : all.slice(Math.max(0, all.length - limit))) print(ctx, v, full, clip);
  if (flags.follow !== true) return;

  // New lines as they are appended, until Ctrl-C (the store watches the session's folder).
  for await (const batch of ctx.store.follow(id, { from: first.cursor, signal: ctx.signal })) {
    if (batch.reset) ctx.out.warn(`the log of session ${id} was replaced; reading it again from line 1`);
    for (const v of viewEvents(batch.lines)) print(ctx, v, full, clip);
  }
}
