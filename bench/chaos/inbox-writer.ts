/**
 * The text of a chaos message, and an inbox writer that runs as its own
 * process (part 2 starts eight of them):
 *
 *   node --import tsx bench/chaos/inbox-writer.ts <inbox-dir,...> <prefix> <count> <big-share> <big-bytes> <seed>
 *
 * The inbox contract: a writer writes a file whose name starts with "." in
 * sessions/<id>/inbox/, then renames it to a name that does not
 * (`<ms>-<pid>-<n>.jsonl`). Its content is one or more JSONL lines, events as
 * they would be written by hand into events.jsonl. The runtime moves each
 * file's lines into events.jsonl in one write, exactly once, then deletes
 * the file. This writer puts 1 to 3 messages in each file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { rng } from './common.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789 é→"\\';

/**
 * A message of exactly `size` characters that names its tag and size first,
 * so a reader can rebuild what it must be and tell a torn or mixed-up copy.
 * The body has multi-byte characters and JSON escapes on purpose.
 */
export function messageText(tag: string, size: number): string {
  const head = `${tag} size=${size} `;
  let h = 0;
  for (const c of tag) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  let block = '';
  for (let i = 0; i < 997; i++) block += ALPHABET[(h + i * 7) % ALPHABET.length];
  const need = Math.max(1, size - head.length);
  // Ends in "." so nothing on the way (a trimmed newline, a trimmed space) can change it.
  return `${head}${block.repeat(Math.ceil(need / block.length)).slice(0, need - 1)}.`;
}

/** The tag and the size a message claims, or null. */
export function parseMessage(text: string): { tag: string; size: number } | null {
  const m = /^(\S+) size=(\d+) /.exec(text);
  return m ? { tag: m[1] as string, size: Number(m[2]) } : null;
}

/**
 * Sizes (in characters) for a writer: mostly small, `bigShare` of them as long
 * as fits in a JSON line of at most `bigBytes` bytes (the body averages 46
 * bytes of JSON per 41 characters: multi-byte characters and escapes).
 */
export function sizeFor(r: ReturnType<typeof rng>, bigShare: number, bigBytes: number): number {
  return r.chance(bigShare) ? bigChars(bigBytes) : r.int(40, 4000);
}

export const bigChars = (bigBytes: number) => Math.floor(((bigBytes - 200) * 41) / 46);

async function main() {
  const [dirs, prefix, count, bigShare, bigBytes, seed] = process.argv.slice(2);
  const inboxes = String(dirs).split(',');
  const r = rng(Number(seed));
  const n = Number(count);
  let i = 0;
  let file = 0;
  const written: Array<{ tag: string; inbox: string; chars: number }> = [];
  while (i < n) {
    const inbox = r.pick(inboxes);
    const lines: string[] = [];
    const k = Math.min(n - i, r.int(1, 3));
    for (let j = 0; j < k; j++) {
      const tag = `${prefix}-${String(++i).padStart(4, '0')}`;
      const chars = sizeFor(r, Number(bigShare), Number(bigBytes));
      lines.push(JSON.stringify({ type: 'user.message', content: messageText(tag, chars) }));
      written.push({ tag, inbox, chars });
    }
    fs.mkdirSync(inbox, { recursive: true });
    const tmp = path.join(inbox, `.${process.pid}-${++file}.tmp`);
    fs.writeFileSync(tmp, `${lines.join('\n')}\n`);
    fs.renameSync(tmp, path.join(inbox, `${Date.now()}-${process.pid}-${file}.jsonl`));
    await new Promise((res) => setTimeout(res, r.int(0, 20)));
  }
  // The bench reads which tag went where from stdout.
  process.stdout.write(`${JSON.stringify(written)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
