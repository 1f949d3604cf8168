/**
 * Text for a person's terminal. What agents and models write (messages,
 * tool inputs, escalation options, summaries) reaches `openboa status`,
 * `events` and the daemon's console; a control character in it could clear
 * the screen, move the cursor over a line, retitle the window or reorder
 * text (bidi overrides), hiding or faking what a person is asked to decide.
 * Every such character is shown as a visible escape (`\u001b`) instead.
 *
 * The only escape sequences let through are the colours openboa itself
 * paints (terminal.ts: one SGR code of its palette, or a reset), so output
 * keeps its colours; a colour in agent text changes nothing but a colour.
 */

/** SGR sequences terminal.ts writes: 1, 2, 22, 31–36, 39. */
const OUR_COLOUR = /^\u001b\[(?:1|2|22|3[1-6]|39)m/;
// C0 except \n and \t, DEL, C1, the bidi marks (LRM, RLM, ALM) and embedding/override/isolate controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const visible = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every control character but \n, \t and openboa's own colours made visible. */
export function safeText(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return keepingColours(text, (c) => {
    CONTROL.lastIndex = 0;
    return CONTROL.test(c) ? visible(c) : c;
  });
}

/** `text` with each character but openboa's own colour sequences (kept whole) replaced by `each(c)`. */
function keepingColours(text: string, each: (c: string) => string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\u001b') {
      const m = OUR_COLOUR.exec(text.slice(i, i + 6));
      if (m) {
        out += m[0];
        i += m[0].length - 1;
        continue;
      }
    }
    out += each(c);
  }
  return out;
}

// What may not stand in one table cell: every control above, and \n and \t.
// eslint-disable-next-line no-control-regex
const CELL_CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * `text` for one cell of a table (or any one-line field): when it holds a
 * line break, a tab or another control character, it is shown quoted, as a
 * JSON string is, with \n, \t and \" and \\ escaped and every other control
 * made visible, so an agent-chosen name such as a file called
 * "a\n2026-01-01  restore  MEMORY.md" can neither start a row of its own nor
 * be mistaken for a plain name. openboa's own colours are kept. Text
 * without any comes back unchanged.
 */
export function safeCell(text: string): string {
  if (!CELL_CONTROL.test(text)) return text;
  let quoted = false;
  const out = keepingColours(text, (c) => {
    if (c === '"' || c === '\\') return `\\${c}`;
    if (!CELL_CONTROL.test(c)) return c;
    quoted = true;
    return c === '\n' ? '\\n' : c === '\t' ? '\\t' : visible(c);
  });
  return quoted ? `"${out}"` : text;
}
