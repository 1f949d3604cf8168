/**
 * The note that opens a compacted conversation: the summary, then the VITAL
 * lines verbatim (docs/context.md), and how it is fitted to a budget.
 *
 * The note is fitted first, right after the system prompt and the tools
 * (fit-window.ts), so it is cut only when it alone exceeds what the window
 * leaves. Then the summary keeps its head (at least a quarter of the room),
 * the VITAL lines fill what the summary's share leaves (the agent's and the
 * person's own before those from tool results, the newest first), the
 * summary takes whatever they do not use, and each cut is marked where it
 * is. Pure: the same summary and budget give the same note, so the requests
 * between two compactions open the same way (the prompt cache).
 */
import { cutHead } from '../foundation/text-cut.js';
import { estimateTokens } from './token-budget.js';

const HEAD = '[openboa: the turns before this point were compacted. Their summary follows; the full history is in the session log and /runtime/summary.md.]';
const VITAL_HEAD = 'VITAL lines from the turns left out, verbatim:';
const TOOL_LINE = '(from a tool result) ';
/** Tries at narrowing the room until the note fits (each takes off what the last one was over). */
const TRIES = 8;

/** The note that opens the conversation after a compaction: the summary, then the VITAL lines verbatim. */
export function summaryNote(summary: string, vital: readonly string[]): string {
  const parts = [HEAD, summary.trim()];
  if (vital.length) parts.push(`${VITAL_HEAD}\n${vital.map((v) => `- ${v}`).join('\n')}`);
  return parts.join('\n\n');
}

export interface FittedOpening {
  text: string;
  /** The summary's characters (trimmed), and those left out of `text`. */
  summaryChars: number;
  summaryLeftOut: number;
  /** The VITAL lines, and those left out of `text`. */
  vitalLines: number;
  vitalLeftOut: number;
}

/** Tokens of the note as a text block, the way the request's size is estimated everywhere. */
export const noteTokens = (text: string) => estimateTokens({ type: 'text', text });

/**
 * The opening note within `budget` tokens (as a text block). Whole when it
 * fits; else cut as the module comment says. When not even a marked head
 * fits (the budget is tiny or below zero), a short note says what is left
 * out and where it is: the request always tells the model.
 */
export function fitOpening(summaryText: string, vital: readonly string[], budget: number): FittedOpening {
  const summary = summaryText.trim();
  const whole = summaryNote(summary, vital);
  const sizes = { summaryChars: summary.length, vitalLines: vital.length };
  if (noteTokens(whole) <= budget) return { text: whole, summaryLeftOut: 0, vitalLeftOut: 0, ...sizes };
  let room = budget * 4 - HEAD.length;
  for (let i = 0; i < TRIES && room > 0; i++) {
    const cut = cutTo(summary, vital, room);
    if (!cut) break;
    const over = noteTokens(cut.text) - budget;
    if (over <= 0) return { ...cut, ...sizes };
    room -= over * 4 + 16;
  }
  return { text: leftOutNote(summary.length, vital.length), summaryLeftOut: summary.length, vitalLeftOut: vital.length, ...sizes };
}

/** The note with the summary's head and the VITAL lines that fit `room` characters; null when neither gets any. */
function cutTo(summary: string, vital: readonly string[], room: number): Omit<FittedOpening, 'summaryChars' | 'vitalLines'> | null {
  const floor = Math.min(summary.length, Math.floor(room / 4));
  const keep = new Set<number>();
  let used = 0;
  for (const i of byPriority(vital)) {
    const n = vital[i]!.length + 3; // "- " and the line's end
    if (used + n > room - floor) break;
    keep.add(i);
    used += n;
  }
  const head = cutHead(summary, Math.max(0, Math.min(summary.length, room - used)));
  if (!head && keep.size === 0) return null;
  const parts = [HEAD];
  if (head.length === summary.length) parts.push(summary);
  else parts.push(`${head}${head ? '\n' : ''}[openboa: ${head ? 'the summary is cut here' : 'the summary is left out here'} to fit the context window: ${summary.length - head.length} of ${summary.length} characters left out. The whole summary is in /runtime/summary.md.]`);
  if (vital.length) {
    const lines = vital.filter((_, i) => keep.has(i)).map((v) => `- ${v}`);
    const left = vital.length - keep.size;
    if (left) lines.unshift(`[openboa: ${left} of ${vital.length} VITAL line(s) are left out here to fit the context window (those from tool results first, then the oldest); every one is in /runtime/summary.md.]`);
    parts.push(`${VITAL_HEAD}\n${lines.join('\n')}`);
  }
  return { text: parts.join('\n\n'), summaryLeftOut: summary.length - head.length, vitalLeftOut: vital.length - keep.size };
}

/** Indices of the VITAL lines, the one to keep first first: own lines before tool-result lines, the newest first. */
function byPriority(vital: readonly string[]): number[] {
  const idx = vital.map((_, i) => i).reverse();
  return [...idx.filter((i) => !vital[i]!.startsWith(TOOL_LINE)), ...idx.filter((i) => vital[i]!.startsWith(TOOL_LINE))];
}

function leftOutNote(summaryChars: number, vitalLines: number): string {
  const what = [`their summary (${summaryChars} characters)`, ...(vitalLines ? [`${vitalLines} VITAL line(s)`] : [])].join(' and ');
  return `[openboa: the turns before this point were compacted; ${what} are left out of this request to fit the context window. Read them in /runtime/summary.md; the full history is in the session log.]`;
}
