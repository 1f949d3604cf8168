/**
 * Terminal output. Results go to stdout (JSON with --json); errors are one
 * line on stderr (`{"error":{"code","message"}}` with --json). Everything
 * printed passes through the redactor of the session at hand, when one is set.
 */
import type { Writable } from 'node:stream';
import { Redactor } from '../core/redact.js';

export class Output {
  redactor: Redactor = Redactor.none;

  constructor(
    private readonly stdout: Writable,
    private readonly stderr: Writable,
    readonly json: boolean,
  ) {}

  /** A line of text (ignored under --json). */
  line(text = ''): void {
    if (!this.json) this.stdout.write(`${this.redactor.text(text)}\n`);
  }

  /** A line on stdout whatever the mode (operator lines, already in their final form). */
  write(line: string): void {
    this.stdout.write(`${this.redactor.text(line)}\n`);
  }

  /** A JSON value on one line (only under --json). */
  data(value: unknown): void {
    if (this.json) this.stdout.write(`${this.redactor.text(JSON.stringify(value))}\n`);
  }

  /** Text for people, or the value for programs. */
  result(value: unknown, text: string | (() => string)): void {
    if (this.json) this.data(value);
    else this.line(typeof text === 'function' ? text() : text);
  }

  /** A notice on stderr that is not an error (progress, warnings). */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${this.redactor.text(text)}\n`);
  }

  error(code: string, message: string): void {
    const one = this.redactor.text(message).replace(/\s*\n\s*/g, ' ');
    if (this.json) this.stderr.write(`${JSON.stringify({ error: { code, message: one } })}\n`);
    else this.stderr.write(`openboa: ${one}\n`);
  }
}

/** Formats rows as aligned columns. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), ...rows.map(fmt)].join('\n');
}
