/**
 * How big a conversation is, and how to make it fit: the token estimate that
 * the run's budgets are counted in (the conversation view, fitting the
 * window, the request's size report), and the cut of the oldest turns to a
 * budget.
 *
 * The estimate is rough on purpose (4 characters per token): it only has to
 * give the same number for the same value every time, so a request rebuilt
 * from the log is cut in the same place, and be cheap enough to run on every
 * step. Estimates of objects are cached by identity, which holds because
 * messages and their blocks are never mutated once built (conversation.ts).
 */
import type { Message } from '../model/provider.js';

const sizeCache = new WeakMap<object, number>();

/**
 * A rough token estimate (4 characters per token), good enough for
 * budgeting. Estimates of objects are cached by identity (messages are never
 * mutated), so re-estimating a long conversation costs only its new parts.
 */
export function estimateTokens(value: unknown): number {
  if (value && typeof value === 'object') {
    const hit = sizeCache.get(value);
    if (hit !== undefined) return hit;
    const n = Math.ceil(JSON.stringify(value).length / 4);
    sizeCache.set(value, n);
    return n;
  }
  return Math.ceil(JSON.stringify(value ?? '').length / 4);
}

/**
 * Drops the oldest turns until the conversation fits `budget` tokens. It cuts
 * only before a user turn that holds no tool_result, so no result is ever
 * left without its tool_use. Keeps at least the last such turn.
 */
export function fitToBudget(messages: Message[], budget: number): { messages: Message[]; dropped: number; tokens: number } {
  const sizes = messages.map((m) => estimateTokens(m));
  let tokens = sizes.reduce((a, b) => a + b, 0);
  let start = 0;
  while (tokens > budget) {
    let next = start + 1;
    while (next < messages.length && !(messages[next]?.role === 'user' && messages[next]?.content.every((b) => b.type !== 'tool_result'))) next++;
    if (next >= messages.length) break;
    for (let k = start; k < next; k++) tokens -= sizes[k] ?? 0;
    start = next;
  }
  return { messages: start ? messages.slice(start) : messages, dropped: start, tokens };
}