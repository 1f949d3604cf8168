/**
 * Terminal output. Results go to stdout (JSON with --json); errors are one
 * line on stderr (`{"error":{"code","message"}}` with --json). Everything
 * printed passes through the redactor of the session at hand, when one is set.
 * Colour is decided once per stream (src/cli/terminal.ts): off unless that
 * stream is a TTY, NO_COLOR is unset and the output is not --json.
 */
import type { Writable } from 'node:stream';
import type { Redactor } from '../core/foundation/redact.js';
import { DEFAULT_COLUMNS, STATUS_COLOUR, colorEnabled, columnsOf, paint, type Colour, type StreamLike } from './terminal.js';

/** What JSON.stringify leaves raw that a terminal acts on: DEL, C1, the bidi marks and controls. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
import { safeText } from './safe-text.js';

export interface OutputOptions {
  /** Whether stdout and stderr may carry colour. */
  color?: { out: boolean; err: boolean };
  /** How wide a line on stdout may be (display columns). */
  columns?: number;
  /** stdout's own width when it is a terminal; unset off a terminal, whatever $COLUMNS says. */
  terminalColumns?: number;
}

/** Text as it is: the redactor until a command sets its session's (so help and the version load no core). */
const AS_IS: Pick<Redactor, 'text'> = { text: (s) => s };

export class Output {
  redactor: Pick<Redactor, 'text'> = AS_IS;
  readonly color: { out: boolean; err: boolean };
  readonly columns: number;
  readonly terminalColumns: number | undefined;

  constructor(
    private readonly stdout: Writable,
    private readonly stderr: Writable,
    readonly json: boolean,
    o: OutputOptions = {},
  ) {
    this.color = json ? { out: false, err: false } : (o.color ?? { out: false, err: false });
    this.columns = o.columns ?? DEFAULT_COLUMNS;
    this.terminalColumns = o.terminalColumns;
  }

  /** `text` in `colour` when stdout takes colour. */
  paint(colour: Colour, text: string): string {
    return paint(this.color.out, colour, text);
  }

  /** A session status word, coloured when stdout takes colour. */
  status(word: string): string {
    const c = STATUS_COLOUR[word];
    return c ? this.paint(c, word) : word;
  }

  /** A line of text (ignored under --json). */
  line(text = ''): void {
    if (!this.json) this.stdout.write(`${safeText(this.redactor.text(text))}\n`);
  }

  /** A line on stdout whatever the mode (operator lines, already in their final form). */
  write(line: string): void {
    this.stdout.write(`${safeText(this.redactor.text(line))}\n`);
  }

  /**
   * A JSON value on one line (only under --json). JSON.stringify escapes C0
   * only; DEL, C1 and the bidi controls are escaped too, so a program's
   * output piped to a terminal cannot drive it either.
   */
  data(value: unknown): void {
    if (this.json) this.stdout.write(`${this.redactor.text(JSON.stringify(value)).replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`);
  }

  /** Text for people, or the value for programs. */
  result(value: unknown, text: string | (() => string)): void {
    if (this.json) this.data(value);
    else this.line(typeof text === 'function' ? text() : text);
  }

  /** A notice on stderr that is not an error (progress, warnings). */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${safeText(this.redactor.text(text))}\n`);
  }

  /** A question on stderr, the answer typed after it on the same line (no line break). */
  prompt(text: string): void {
    this.stderr.write(safeText(this.redactor.text(text)));
  }

  /** A warning on stderr: something the user should know, though the command did what was asked. */
  warn(text: string): void {
    if (!this.json) this.stderr.write(`${paint(this.color.err, 'yellow', 'openboa: note:')} ${safeText(this.redactor.text(text).replace(/\s*\n\s*/g, ' '))}\n`);
  }

  error(code: string, message: string): void {
    const one = this.redactor.text(message).replace(/\s*\n\s*/g, ' ');
    if (this.json) this.stderr.write(`${JSON.stringify({ error: { code, message: one } })}\n`);
    else this.stderr.write(`${paint(this.color.err, 'red', 'openboa:')} ${safeText(one)}\n`);
  }
}

/** The Output of a CLI process: colour per stream and line width from its streams and environment (terminal.ts). */
export function outputFor(stdout: Writable & StreamLike, stderr: Writable & StreamLike, env: NodeJS.ProcessEnv, json: boolean): Output {
  return new Output(stdout, stderr, json, {
    color: { out: colorEnabled(stdout, env, json), err: colorEnabled(stderr, env, json) },
    columns: columnsOf(stdout, env),
    ...(stdout.isTTY && stdout.columns ? { terminalColumns: stdout.columns } : {}),
  });
}
