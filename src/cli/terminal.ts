/**
 * What the terminal can show: whether to colour a stream and how wide a line
 * may be. Colour only on a TTY, never when NO_COLOR is set (https://no-color.org)
 * or TERM=dumb, never under --json. Measuring text in display columns is in
 * width.ts, loaded only by the commands that lay text out.
 */

export interface StreamLike {
  isTTY?: boolean;
  columns?: number;
}

/** Width assumed when stdout is not a terminal and $COLUMNS does not say: wide enough for an id and a short text. */
export const DEFAULT_COLUMNS = 100;

export function colorEnabled(stream: StreamLike, env: NodeJS.ProcessEnv, json: boolean): boolean {
  if (json || stream.isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

/** The terminal's width when stdout is one, else $COLUMNS, else DEFAULT_COLUMNS. */
export function columnsOf(stream: StreamLike, env: NodeJS.ProcessEnv): number {
  if (stream.isTTY === true && typeof stream.columns === 'number' && stream.columns > 0) return stream.columns;
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return DEFAULT_COLUMNS;
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, dim: 2, bold: 1 } as const;
export type Colour = keyof typeof CODES;

/** Wraps text in an SGR colour when `on`; otherwise returns it unchanged. */
export function paint(on: boolean, colour: Colour, text: string): string {
  if (!on || text === '') return text;
  const close = colour === 'dim' || colour === 'bold' ? 22 : 39;
  return `\u001b[${CODES[colour]}m${text}\u001b[${close}m`;
}

/** Colour of a session status word: what a person should look at stands out. */
export const STATUS_COLOUR: Record<string, Colour> = {
  idle: 'green',
  running: 'cyan',
  rescheduling: 'yellow',
  terminated: 'dim',
  unreadable: 'red',
};
