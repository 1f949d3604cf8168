/**
 * Tool-call arguments a model sent as a string (OpenAI-compatible APIs send
 * `function.arguments` as JSON text, and a model may get it wrong). Text
 * that is not one JSON object must not crash the run or be guessed at: it
 * becomes the input `{[MALFORMED_ARGUMENTS]: <the text as sent>}`, the call
 * is recorded like any other, and the tool policy refuses it with an error
 * result naming the problem (malformedInputError), which the model reads and
 * corrects in its next turn. The text is kept so the conversation sends the
 * model back exactly what it wrote.
 */

/** The one key of a malformed call's input. Reserved: no tool input schema may use it. */
export const MALFORMED_ARGUMENTS = '__invalid_json_arguments';

/** How much of the text an error result quotes back. */
const QUOTE_CHARS = 300;

/** The input for an arguments string: the object it holds, or the malformed marker. Empty text is `{}` (a call without arguments). */
export function parseToolArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const r = jsonObject(text);
  return 'value' in r ? r.value : { [MALFORMED_ARGUMENTS]: text };
}

/** The text as sent when `input` is a malformed call's, else null. */
export function malformedArguments(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  const keys = Object.keys(input);
  const text = (input as Record<string, unknown>)[MALFORMED_ARGUMENTS];
  return keys.length === 1 && typeof text === 'string' ? text : null;
}

/** The error result of a malformed call: what is wrong, a quote, and what to do. */
export function malformedInputError(name: string, text: string): string {
  const r = jsonObject(text);
  const why = 'error' in r ? r.error : 'not a JSON object';
  const quote = text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text;
  return `not run: the arguments of this ${name} call are not valid JSON (${why}): ${JSON.stringify(quote)}. Call ${name} again with its arguments as one JSON object.`;
}

function jsonObject(text: string): { value: Record<string, unknown> } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { error: (e as Error).message };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: `expected an object, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}` };
  return { value: v as Record<string, unknown> };
}
