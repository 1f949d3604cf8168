/**
 * The Messages API's `thinking` parameter for a request, under the API's
 * rules for extended thinking (manual mode, `{type: "enabled",
 * budget_tokens}`):
 *
 *  - A forced tool (`tool_choice` of type tool or any) is refused with
 *    thinking on, so a request that forces one never carries thinking (the
 *    rubric grader's does).
 *  - When the request continues a tool loop (its last user turn carries
 *    tool results), the assistant turn before it must open with the thinking
 *    block the model sent ("a final assistant message must start with a
 *    thinking block"). The conversation echoes replies block by block
 *    (conversation.ts), so a reply made with thinking on does open with it;
 *    a reply made with thinking off does not (thinking was switched on in
 *    agent.yaml in the middle of a tool loop). Such a request goes without
 *    thinking, as the API advises ("to avoid this requirement, disable
 *    thinking"), rather than fail with a 400 that would stop the session; the
 *    next user turn starts a new assistant turn, and thinking with it.
 */
import type { ModelRequest } from './provider.js';

export type ThinkingParam = { type: 'enabled'; budget_tokens: number };

/** The `thinking` to send with `req`, or null to send none. */
export function thinkingParam(req: ModelRequest): ThinkingParam | null {
  if (!req.thinking || req.tool_choice) return null;
  if (!tailOpensWithThinking(req)) return null;
  return { type: 'enabled', budget_tokens: req.thinking.budget_tokens };
}

/** False when the request continues a tool loop whose assistant turn does not open with a thinking block. */
function tailOpensWithThinking(req: ModelRequest): boolean {
  const last = req.messages[req.messages.length - 1];
  const prev = req.messages[req.messages.length - 2];
  if (!last || last.role !== 'user' || !last.content.some((b) => b.type === 'tool_result')) return true;
  if (!prev || prev.role !== 'assistant') return true;
  const first = prev.content[0];
  return first?.type === 'thinking' || first?.type === 'redacted_thinking';
}
