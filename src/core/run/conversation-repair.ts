/**
 * The repair pass of the conversation (ConversationBuilder.view): makes the
 * messages rebuilt from the log a list the Messages API accepts, and
 * resumes where an earlier pass stood, so a long conversation that grew by a
 * few messages costs only those.
 */
import type { TextBlock } from '../schema/index.js';
import type { Message, ToolResultBlock } from '../model/provider.js';
import { estimateTokens } from './token-estimate.js';

/** The content of the error result given to a tool use whose result the log does not hold (a new array each time). */
const noResult = (): TextBlock[] => [{ type: 'text', text: 'no result was recorded for this tool call' }];

const useIdsOf = (m: Message): string[] => (m.role === 'assistant' ? m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : []);

/** Where the repair pass stood after one input message, so a later pass can resume there. */
export interface RepairMark {
  /** The input message, by identity. */
  src: Message;
  outLen: number;
  started: boolean;
  /** Tool uses of the last assistant turn still waiting for their results. */
  open: string[];
  /** The last output message as it stood then (later steps may replace it by a merged copy). */
  last: Message | undefined;
  /** Estimated tokens of the output messages before `last`. */
  before: number;
}

/**
 * Makes the conversation valid for the Messages API in one forward pass: it
 * starts with a user turn, every tool_use has its tool_result in the next
 * user turn (an error result is added where none was recorded), no
 * tool_result dangles, roles alternate. Never mutates its input.
 *
 * The pass leaves a mark after each message; given the marks of an earlier
 * pass, it resumes after the longest prefix of unchanged messages, so a long
 * conversation that grew by a few messages costs only those.
 */
export function repairIncremental(input: readonly Message[], prev: { marks: RepairMark[]; out: Message[] } | null, repairs: string[]) {
  let k = 0;
  if (prev) {
    const n = Math.min(prev.marks.length, input.length);
    while (k < n && prev.marks[k]?.src === input[k]) k++;
    k = Math.max(0, k - 1); // the last common message may have changed its successor's repair
  }
  const marks = prev ? prev.marks.slice(0, k) : [];
  const at = marks[k - 1];
  const out: Message[] = at ? prev!.out.slice(0, at.outLen) : [];
  if (at && at.last && out.length) out[out.length - 1] = at.last;
  let started = at?.started ?? false;
  let open: string[] = at ? [...at.open] : [];
  let dropped = 0;
  let before = at?.before ?? 0; // tokens of out[0 .. length-2]
  const add = (m: Message) => {
    const last = out[out.length - 1];
    if (last && last.role === m.role) out[out.length - 1] = { role: m.role, content: [...last.content, ...m.content] } as Message;
    else {
      if (last) before += estimateTokens(last);
      out.push(m);
    }
  };
  for (let i = k; i < input.length; i++) {
    let m = input[i] as Message;
    if (!started) {
      if (m.role === 'user' && m.content.some((b) => b.type !== 'tool_result')) started = true;
      else {
        dropped++;
        marks.push({ src: m, outLen: out.length, started, open, last: out[out.length - 1], before });
        continue;
      }
    }
    if (m.role === 'user') {
      const have = new Set(m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])));
      const allowed = new Set(open);
      const content = m.content.filter((b) => b.type !== 'tool_result' || allowed.has(b.tool_use_id));
      if (content.length < m.content.length) repairs.push(`dropped ${m.content.length - content.length} tool result(s) with no matching tool use`);
      const missing = open.filter((id) => !have.has(id));
      if (missing.length) repairs.push(`added an error result for ${missing.length} tool use(s) with no recorded result`);
      const synthetic: ToolResultBlock[] = missing.map((id) => ({ type: 'tool_result', tool_use_id: id, content: noResult(), is_error: true }));
      if (synthetic.length || content.length < m.content.length) m = { role: 'user', content: [...synthetic, ...content] };
      if (m.content.length) add(m);
      open = [];
    } else {
      if (open.length && out[out.length - 1]?.role === 'assistant') {
        // two assistant turns in a row: they merge; uses of both wait for results
        open = [...open, ...useIdsOf(m)];
      } else {
        if (open.length) {
          repairs.push(`added an error result for ${open.length} tool use(s) with no recorded result`);
          add({ role: 'user', content: open.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: noResult(), is_error: true })) });
        }
        open = useIdsOf(m);
      }
      if (m.content.length) add(m);
    }
    marks.push({ src: input[i] as Message, outLen: out.length, started, open, last: out[out.length - 1], before });
  }
  if (dropped > 0 && k === 0) repairs.push(`dropped ${dropped} leading message(s) cut off by the context window`);
  const final = [...out];
  let tokens = before + (out.length ? estimateTokens(out[out.length - 1]) : 0);
  if (open.length && final[final.length - 1]?.role === 'assistant') {
    repairs.push(`added an error result for ${open.length} tool use(s) with no recorded result`);
    const closing: Message = { role: 'user', content: open.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: noResult(), is_error: true })) };
    final.push(closing);
    tokens += estimateTokens(closing);
  }
  return { messages: final, marks, out, tokens };
}
