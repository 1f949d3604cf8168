/**
 * Text measured in display columns (string-width: a CJK character or an
 * emoji takes two, an ANSI colour code none), so clipped lines and table
 * columns stay aligned whatever the text holds.
 *
 * Import this module dynamically, from the commands that lay text out:
 * string-width compiles Unicode-property regular expressions when it loads
 * (about 30 ms), which a command that prints an id should not pay.
 */
import stringWidth from 'string-width';
import { safeCell } from './safe-text.js';

export const widthOf = (text: string): number => stringWidth(text);

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * `text` cut to at most `width` display columns, ending in "…" when cut.
 * Cuts between graphemes, so a wide character or an emoji is never halved.
 * Expects plain text (colour it after clipping).
 */
export function clipToWidth(text: string, width: number): string {
  if (width <= 0) return '';
  if (stringWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** Pads `text` with spaces to `width` display columns (colour codes count as none). */
export function padToWidth(text: string, width: number): string {
  const w = stringWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}

/**
 * Rows as aligned columns; the last column is not padded. Every cell is one
 * line (safeCell): a cell that holds a line break, a tab or a control
 * character is shown quoted and escaped, so text an agent chose (a file
 * name, a title, a learning) cannot fake a row or shift the columns.
 */
export function table(headers: string[], cells: string[][]): string {
  const rows = cells.map((r) => r.map(safeCell));
  const widths = headers.map((h, i) => Math.max(widthOf(h), ...rows.map((r) => widthOf(r[i] ?? ''))));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : padToWidth(c, widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), ...rows.map(fmt)].join('\n');
}
