/**
 * Secret redaction. Every writer of the log, of runtime/ and of terminal
 * output passes what it writes through one Redactor built from the session's
 * secrets, so a secret's value is replaced by `[REDACTED:NAME]` wherever it
 * appears: in tool output, in model text, in error messages.
 *
 * What is matched (docs/runs.md, "Environment and secrets"):
 * - a secret of FRAGMENT_MIN characters or more: every run of at least
 *   FRAGMENT_MIN consecutive characters of it (the whole value, a prefix, a
 *   suffix or a piece of the middle), each maximal run replaced by one mark;
 * - a shorter secret: its exact value only (a piece of it would match
 *   ordinary text).
 * Runs are matched whatever the case of their ASCII letters (a hex token
 * upper-cased, as `${TOKEN^^}` prints it or a search index lower-cases it,
 * is the token); a whole short secret is matched exactly. Anything else
 * changed on the way (encoded, reversed, cut into pieces shorter than
 * FRAGMENT_MIN) is not recognised. Runs of two secrets that overlap become
 * one mark (the longer run's).
 *
 * Cost: one pass over the text, O(text length) for any number of secrets.
 * Every secret's WINDOW-character pieces, at every offset, are indexed by
 * a hash; the text is looked up only at offsets that are multiples of
 * WINDOW (a run of 2×WINDOW-1 characters or more always holds one such
 * aligned piece whole), and a hit is checked and extended both ways
 * character by character. A stretch of text already inside a found run is
 * not looked up again.
 */

/** The shortest piece of a secret that is redacted wherever it appears (a secret shorter than this: its whole value only). */
export const FRAGMENT_MIN = 16;
/** The indexed piece: any run of FRAGMENT_MIN ≥ 2×WINDOW-1 characters holds a whole piece starting at a multiple of WINDOW. */
const WINDOW = 8;
/** The characters of a piece its hash is made of (see pieceHash). */
const KEY_CHARS = 4;
/**
 * Offsets indexed per piece and secret. A random token has each piece once;
 * a secret that repeats one piece more often than this (a long run of one
 * character) is indexed at the first REPEATS_MAX of them only, so a
 * pathological secret cannot make each lookup cost its length (a run of
 * such a secret that matches none of those offsets' extensions for 16
 * characters could be missed; a run of one repeated character never is).
 */
const REPEATS_MAX = 16;

/** The filter's size, 2^FILTER_BITS bits (8 KB): a few thousand indexed pieces leave most bits clear. */
const FILTER_BITS = 16;
const FILTER_MASK = (1 << (FILTER_BITS - 5)) - 1;

interface Secret {
  value: string;
  /** value with ASCII upper case made lower (what pieces are matched against). */
  lower: string;
  mark: string;
}

/** A found run: [start, end) of the text, the secret it belongs to. */
interface Run {
  start: number;
  end: number;
  secret: number;
}

/** ASCII with upper case made lower (a table: the scan's hot loop then has one predictable branch per character). */
const ASCII_LOWER = Uint8Array.from({ length: 128 }, (_, c) => (c >= 65 && c <= 90 ? c | 32 : c));
/** A UTF-16 unit with ASCII upper case made lower: pieces of a secret are matched whatever their ASCII letters' case. */
const fold = (c: number) => (c < 128 ? ASCII_LOWER[c]! : c);
const folded = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/**
 * The hash of a piece, text[at, at+WINDOW), from its first KEY_CHARS UTF-16
 * units (FNV-1a): equal pieces hash alike; a hit is checked in full. Reading
 * half of each piece makes the scan of a text without secrets (nearly all
 * of them) about a third faster, at the price of more hits to check.
 */
function pieceHash(s: string, at: number): number {
  let h = 0x811c9dc5;
  for (let i = at; i < at + KEY_CHARS; i++) h = Math.imul(h ^ fold(s.charCodeAt(i)), 0x01000193);
  return h;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

export class Redactor {
  /** Longest values first (names keeps this order). */
  private readonly secrets: Secret[];
  /** Secrets shorter than FRAGMENT_MIN, matched whole: indexes into secrets. */
  private readonly whole: number[] = [];
  /** Piece hash → [secret, offset, secret, offset, ...] of the secrets of FRAGMENT_MIN or more. */
  private readonly pieces = new Map<number, number[]>();
  /** One bit per FILTER_BITS-bit slice of a piece hash that some piece has: most of a text is passed over without a Map lookup. */
  private readonly filter = new Uint32Array(1 << (FILTER_BITS - 5));

  constructor(secrets: Record<string, string> = {}) {
    this.secrets = Object.entries(secrets)
      .filter(([, v]) => v.length > 0)
      .map(([name, v]) => ({ value: v, lower: folded(v), mark: `[REDACTED:${name}]` }))
      .sort((a, b) => b.value.length - a.value.length);
    this.secrets.forEach(({ value, lower }, i) => {
      if (value.length < FRAGMENT_MIN) {
        this.whole.push(i);
        return;
      }
      const seen = new Map<string, number>();
      for (let o = 0; o + WINDOW <= lower.length; o++) {
        const piece = lower.slice(o, o + WINDOW);
        const n = seen.get(piece) ?? 0;
        if (n >= REPEATS_MAX) continue;
        seen.set(piece, n + 1);
        const h = pieceHash(lower, o);
        const w = (h >>> 5) & FILTER_MASK;
        this.filter[w] = this.filter[w]! | (1 << (h & 31));
        const at = this.pieces.get(h);
        if (at) at.push(i, o);
        else this.pieces.set(h, [i, o]);
      }
    });
  }

  static readonly none = new Redactor();

  get active(): boolean {
    return this.secrets.length > 0;
  }

  /**
   * How many of `text`'s last characters may still become part of a
   * secret's run if `text` grows (a stream): the longest end of it that is
   * a piece of some secret, ASCII case aside. A run that is cut by the end
   * of `text` is such an end, so what comes before it is settled. 0 with no
   * secrets. Cost: secrets × (longest secret)², for the streams that ask.
   */
  unsettledTail(text: string): number {
    if (this.secrets.length === 0) return 0;
    const end = folded(text.slice(-(this.secrets[0] as Secret).value.length));
    let best = 0;
    for (const { lower } of this.secrets) {
      for (let h = Math.min(end.length, lower.length); h > best; h--) {
        if (lower.includes(end.slice(end.length - h))) {
          best = h;
          break;
        }
      }
    }
    return best;
  }

  /** The secret names (never the values), e.g. for runtime/vaults.json. */
  get names(): string[] {
    return this.secrets.map(({ mark }) => mark.slice('[REDACTED:'.length, -1));
  }

  /** `s` with every secret and every run of FRAGMENT_MIN or more of a secret's characters replaced by its mark; `s` itself when none is there. */
  text(s: string): string {
    if (this.secrets.length === 0 || s.length === 0) return s;
    const runs: Run[] = [];
    for (const i of this.whole) {
      const { value } = this.secrets[i]!;
      for (let at = s.indexOf(value); at !== -1; at = s.indexOf(value, at + value.length)) runs.push({ start: at, end: at + value.length, secret: i });
    }
    if (this.pieces.size > 0 && s.length >= FRAGMENT_MIN) this.fragments(s, runs);
    return runs.length === 0 ? s : this.replace(s, runs);
  }

  /** Appends to `runs` every maximal run (FRAGMENT_MIN or more) of a long secret's characters in `s`. */
  private fragments(s: string, runs: Run[]): void {
    /** The end of the furthest run found so far: an aligned piece wholly before it lies inside that run. */
    let covered = 0;
    for (let p = 0; p + WINDOW <= s.length; p += WINDOW) {
      if (p + WINDOW <= covered) continue;
      const h = pieceHash(s, p);
      if ((this.filter[(h >>> 5) & FILTER_MASK]! & (1 << (h & 31))) === 0) continue;
      const at = this.pieces.get(h);
      if (!at) continue;
      let best: Run | null = null;
      for (let k = 0; k < at.length; k += 2) {
        const i = at[k]!;
        const o = at[k + 1]!;
        const value = this.secrets[i]!.lower;
        let same = 0;
        while (same < WINDOW && fold(s.charCodeAt(p + same)) === value.charCodeAt(o + same)) same++;
        if (same < WINDOW) continue; // a hash collision
        let back = 0;
        while (back < o && back < p && fold(s.charCodeAt(p - back - 1)) === value.charCodeAt(o - back - 1)) back++;
        let fwd = WINDOW;
        while (o + fwd < value.length && p + fwd < s.length && fold(s.charCodeAt(p + fwd)) === value.charCodeAt(o + fwd)) fwd++;
        // The longest run; of equal ones the leftmost (a secret that repeats itself then leaves no raw head).
        const len = back + fwd;
        if (len >= FRAGMENT_MIN && (!best || len > best.end - best.start || (len === best.end - best.start && p - back < best.start))) best = { start: p - back, end: p + fwd, secret: i };
      }
      if (best) {
        runs.push(best);
        covered = Math.max(covered, best.end);
      }
    }
  }

  /** `s` with each run replaced by its mark; overlapping runs, and touching runs of one secret, merge into one (the longest one's mark); a surrogate pair is never cut. */
  private replace(s: string, runs: Run[]): string {
    runs.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let last = 0;
    let cur: Run | null = null;
    let curLongest = 0;
    const flush = () => {
      if (!cur) return;
      let { start, end } = cur;
      if (start > last && isLow(s.charCodeAt(start)) && isHigh(s.charCodeAt(start - 1))) start -= 1;
      if (end < s.length && isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end))) end += 1;
      out += s.slice(last, start) + this.secrets[cur.secret]!.mark;
      last = end;
    };
    for (const r of runs) {
      if (cur && (r.start < cur.end || (r.start === cur.end && r.secret === cur.secret))) {
        if (r.end - r.start > curLongest) {
          curLongest = r.end - r.start;
          cur.secret = r.secret;
        }
        cur.end = Math.max(cur.end, r.end);
        continue;
      }
      flush();
      cur = { ...r };
      curLongest = r.end - r.start;
    }
    flush();
    return out + s.slice(last);
  }

  /** Redacts a file's bytes read as UTF-8; the same Buffer when nothing is redacted (bytes that are not UTF-8 then stay as they were). */
  bytes(data: Buffer): Buffer {
    if (this.secrets.length === 0 || data.length === 0) return data;
    const s = data.toString('utf8');
    const r = this.text(s);
    return r === s ? data : Buffer.from(r, 'utf8');
  }

  /** Redacts every string (keys included) inside a JSON-like value; returns a copy. */
  deep<T>(value: T): T {
    if (this.secrets.length === 0) return value;
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
