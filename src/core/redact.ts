/**
 * Secret redaction. Every writer of the log, of runtime/ and of terminal
 * output passes what it writes through one Redactor built from the session's
 * secrets, so a secret's value is replaced by `[REDACTED:NAME]` wherever it
 * appears: in tool output, in model text, in error messages.
 */
export class Redactor {
  /** Longest values first, so a secret that contains another is replaced whole. */
  private readonly pairs: Array<[value: string, mark: string]>;

  constructor(secrets: Record<string, string> = {}) {
    this.pairs = Object.entries(secrets)
      .filter(([, v]) => v.length > 0)
      .map(([name, v]): [string, string] => [v, `[REDACTED:${name}]`])
      .sort((a, b) => b[0].length - a[0].length);
  }

  static readonly none = new Redactor();

  get active(): boolean {
    return this.pairs.length > 0;
  }

  /** The secret names (never the values), e.g. for runtime/vaults.json. */
  get names(): string[] {
    return this.pairs.map(([, mark]) => mark.slice('[REDACTED:'.length, -1));
  }

  text(s: string): string {
    if (this.pairs.length === 0 || s.length === 0) return s;
    let out = s;
    for (const [value, mark] of this.pairs) {
      if (out.includes(value)) out = out.split(value).join(mark);
    }
    return out;
  }

  /** Redacts every string (keys included) inside a JSON-like value; returns a copy. */
  deep<T>(value: T): T {
    if (this.pairs.length === 0) return value;
    return this.walk(value) as T;
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.walk(x));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[this.text(k)] = this.walk(x);
      return out;
    }
    return v;
  }
}
