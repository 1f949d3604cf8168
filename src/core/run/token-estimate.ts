/**
 * Token estimates for budgeting the context window: rough (4 characters per
 * token) and cached by identity, and the cut of whole old turns that fits a
 * conversation to a budget.
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
