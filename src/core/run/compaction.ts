/**
 * When a conversation outgrows the context window, the oldest whole turns are
 * left out of the request. The model is not left guessing: the first user turn
 * it sees opens with a digest of what was left out (who asked what, what the
 * agent answered), and runtime/summary.md holds the same digest for people and
 * for the agent to reread. The digest is made from the log, deterministically
 * (no model call), so every rebuild gives the same request; the log keeps
 * every word.
 */
import type { Message } from '../model/provider.js';
import type { TextBlock } from '../schema/index.js';
import { cutHead } from '../foundation/text-cut.js';

/** Tokens the digest takes at most; it gets only what the kept turns leave (fit-window.ts). */
export const DIGEST_TOKENS = 1500;
/** Characters of a digest's budget that its first line and the note around it take. */
const DIGEST_FRAME = 400;
const LINE = 160;

function textOf(m: Message): string {
  return (m.content as ReadonlyArray<{ type: string; text?: string }>)
    .filter((b) => b.type === 'text' && b.text)
    .map((b) => b.text as string)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const clip = (s: string) => (s.length > LINE ? `${cutHead(s, LINE - 1)}…` : s);

/**
 * One line per exchange of the left-out turns, newest kept when it must be
 * short: within about `tokens` tokens, but never less than its first line
 * (how many messages are left out), so the model always knows.
 */
export function digestOf(dropped: readonly Message[], tokens = DIGEST_TOKENS): string {
  const lines: string[] = [];
  let tools = 0;
  for (const m of dropped) {
    if (m.role === 'assistant') tools += m.content.filter((b) => b.type === 'tool_use').length;
    const t = textOf(m);
    if (!t) continue;
    lines.push(`${m.role === 'user' ? 'user' : 'agent'}: ${clip(t)}`);
  }
  const budget = Math.min(DIGEST_TOKENS, tokens) * 4 - DIGEST_FRAME;
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    size += (lines[i] as string).length + 1;
    if (size > budget) break;
    kept.unshift(lines[i] as string);
  }
  const head = `${dropped.length} earlier message(s) (${tools} tool call(s)) are left out here to fit the context window.`;
  const skipped = lines.length - kept.length;
  return [head, skipped ? `(${skipped} older line(s) of this digest omitted)` : '', ...kept].filter(Boolean).join('\n');
}

/** The note that carries a digest into the request. */
export function digestNote(digest: string): TextBlock {
  return { type: 'text', text: `[Earlier in this session — a digest; the full history is in the session log and /runtime/summary.md]\n${digest}` };
}

/** The request's first user turn, opened with `blocks` (the summary's note, the digest's). */
export function withOpening(messages: Message[], blocks: readonly TextBlock[]): Message[] {
  if (blocks.length === 0) return messages;
  const [first, ...rest] = messages;
  if (!first || first.role !== 'user') return [{ role: 'user', content: [...blocks] }, ...messages];
  return [{ role: 'user', content: [...blocks, ...first.content] }, ...rest];
}
