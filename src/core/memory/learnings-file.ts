/**
 * `agents/<id>/memory/LEARNINGS.md`: the agent's learnings journal rendered
 * for the model and for people (docs/memory.md, "Learnings"). Duplicates
 * merged, most repeated then newest first, retired ones left out, bounded
 * (LEARNINGS_MAX_ENTRIES, LEARNINGS_MAX_BYTES, cut with a note). The file is
 * derived: it is rewritten (temp + rename) whenever the journal says
 * something else, so a crash between an append and a render is repaired by
 * the next render, and deleting the file loses nothing.
 *
 * The system prompt's section is the same text without the notes about
 * skipped lines; it depends on the journal alone, so it stays byte for byte
 * the same while nothing is learned or retired (the prompt cache).
 */
import fs from 'node:fs';
import type { Home } from '../foundation/home.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { READ_FLAGS, readAtMost } from '../sandbox/beneath.js';
import { learningsPaths, mergeLearnings, readLearnings, type LearningsNote, type MergedLearning } from './learnings.js';

/** Learnings the rendered file (and the prompt) holds at most. */
export const LEARNINGS_MAX_ENTRIES = 50;
/** Bytes the rendered section holds at most. */
export const LEARNINGS_MAX_BYTES = 8 * 1024;

export interface RenderedLearnings {
  /** The system prompt's section; null when no learning is active (the prompt then has no section). */
  section: string | null;
  /** The file's text (the section, or a line saying there is none, then the notes). */
  file: string;
  /** Lines of the journal that were skipped. */
  notes: LearningsNote[];
  /** Active learnings, and how many of them the section holds. */
  active: number;
  shown: number;
}

/**
 * One learning, one line. Who wrote it is said by the runtime, outside the
 * text: `from a person` only for a person's correction; the agent's own
 * learnings (a "correction" it noted included) say `noted by the agent`.
 */
function line(g: MergedLearning): string {
  const times = g.count > 1 ? `, ×${g.count}` : '';
  const tags = g.tags.length ? ` [${g.tags.join(', ')}]` : '';
  const who = g.source === 'person' ? 'from a person' : 'noted by the agent';
  return `- ${g.kind}, ${who} (${g.last_at.slice(0, 10)}${times}): ${g.text}${tags} (${g.id})`;
}

/** Renders merged learnings (mergeLearnings' order) and the notes. */
export function renderLearnings(all: readonly MergedLearning[], notes: readonly LearningsNote[] = []): RenderedLearnings {
  // A person's corrections first, so no number of the agent's own notes can push them out of the bound.
  const active = [...all.filter((g) => !g.retired && g.source === 'person'), ...all.filter((g) => !g.retired && g.source !== 'person')];
  const head = [
    '# Learnings',
    '',
    "What this agent's earlier sessions learned, one per line: first the corrections people made by denying a tool call (`from a person`), then what the sessions noted themselves with the `learn` tool (`noted by the agent`: notes, not instructions from the runtime or from a person), learned in the most sessions and newest first. Take them into account; they may be out of date.",
    '',
  ].join('\n');
  const lines: string[] = [];
  let bytes = Buffer.byteLength(head);
  for (const g of active) {
    if (lines.length >= LEARNINGS_MAX_ENTRIES) break;
    const l = line(g);
    const b = Buffer.byteLength(l) + 1;
    // Room is kept for the note that says how many were left out.
    if (bytes + b > LEARNINGS_MAX_BYTES - 120) break;
    lines.push(l);
    bytes += b;
  }
  const left = active.length - lines.length;
  const cut = left > 0 ? `\n\n(${left} older or less repeated learning${left === 1 ? '' : 's'} left out: this list holds at most ${LEARNINGS_MAX_ENTRIES} and ${LEARNINGS_MAX_BYTES / 1024} KB.)` : '';
  const section = active.length ? `${head}\n${lines.join('\n')}${cut}` : null;
  const noteText = notes.length ? `\n\n## Skipped lines\n\n${notes.map((n) => `- learnings.jsonl line ${n.line}: ${n.problem}`).join('\n')}` : '';
  const file = `${section ?? `${head}\n(none yet)`}${noteText}\n`;
  return { section, file, notes: [...notes], active: active.length, shown: lines.length };
}

/**
 * Whether the file already says `text`. The file is in memory/, which the
 * agent may write: it is read without following a symlink, without blocking
 * on a FIFO, and no further than the text's own length (anything else is
 * "different", and the rename replaces whatever is there).
 */
function sameContent(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_FLAGS);
  } catch {
    return false;
  }
  try {
    const st = fs.fstatSync(fd);
    const want = Buffer.from(text, 'utf8');
    if (!st.isFile() || st.size !== want.length) return false;
    const got = readAtMost(fd, want.length, st.size);
    return got !== null && got.equals(want);
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Renders the agent's journal and rewrites LEARNINGS.md when it says
 * something else (temp + rename: a reader never sees a torn file). Without a
 * journal and without a file nothing is written. A failed write is left for
 * the next render: the file is a cache, and the result is still returned.
 */
export function renderLearningsFile(home: Home, agentId: string): RenderedLearnings {
  const p = learningsPaths(home, agentId);
  const j = readLearnings(p.journal);
  const r = renderLearnings(mergeLearnings(j), j.notes);
  try {
    if (!fs.existsSync(p.journal) && !fs.existsSync(p.markdown)) return r;
    if (sameContent(p.markdown, r.file)) return r;
    fs.mkdirSync(p.memoryDir, { recursive: true });
    writeFileAtomic(p.markdown, r.file, { durable: false });
  } catch {
    // derived: the next render tries again
  }
  return r;
}
