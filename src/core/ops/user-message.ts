/**
 * A person's message as the event that carries it (sendMessage delivers
 * it; a one-shot `openboa send` writes it without the schema, so this is
 * the check the schema's UserContent would make of a text).
 */
import { invalidInput } from '../foundation/errors.js';
import type { NewEvent, UserContentBlock } from '../schema/index.js';

/** A text is one text block; throws invalid_input for an empty message. */
export function userMessage(content: string | UserContentBlock[], o: { traceparent?: string } = {}): NewEvent {
  if (typeof content === 'string' && content.trim() === '') throw invalidInput('the message is empty');
  const blocks: UserContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  // A caller's trace context (W3C traceparent), when it sent one: the run that takes the message in joins that trace.
  return { type: 'user.message', content: blocks, ...(o.traceparent ? { traceparent: o.traceparent } : {}) };
}
