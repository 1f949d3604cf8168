/**
 * An agent's learnings journal, `agents/<id>/learnings.jsonl` (docs/memory.md,
 * "Learnings"): what its sessions learned (the `learn` tool, and corrections
 * made by themselves from denied tool calls), one line each, appended in one
 * write; a person retires one with another line. The journal is the truth;
 * `memory/LEARNINGS.md` and the system prompt's section are rendered from it
 * (learnings-file.ts).
 *
 * Reading never throws for a line: a bad line is skipped with a note naming
 * the file and the line, so one stray line cannot stop a run or the CLI.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from './clock.js';
import { iso } from './clock.js';
import type { Home } from './home.js';
import { uuidv7 } from './ids.js';
import type { Redactor } from './redact.js';
import { notFound } from './errors.js';
import { appendLines, readLines } from './store/jsonl.js';
import { describeIssues } from './store/parse-line.js';
import { cutHead } from './text-cut.js';
import { LEARNING_ID, LEARNING_TAG_MAX, LEARNING_TAGS_MAX, LEARNING_TEXT_MAX, LearningEntry, LearningRetire, type LearningKind } from './schema/index.js';

export interface LearningsPaths {
  /** learnings.jsonl: the journal. */
  journal: string;
  /** memory/: where LEARNINGS.md is rendered. */
  memoryDir: string;
  /** memory/LEARNINGS.md: the journal rendered. */
  markdown: string;
}

export function learningsPaths(home: Home, agentId: string): LearningsPaths {
  const dir = home.agentDir(agentId);
  const memoryDir = path.join(dir, 'memory');
  return { journal: path.join(dir, 'learnings.jsonl'), memoryDir, markdown: path.join(memoryDir, 'LEARNINGS.md') };
}

/** A line of the journal that was skipped, and why. */
export interface LearningsNote {
  file: string;
  line: number;
  problem: string;
}

export interface LearningsJournal {
  /** The learnings, in the journal's order, with their line numbers. */
  entries: Array<{ line: number; entry: LearningEntry }>;
  retires: Array<{ line: number; retire: LearningRetire }>;
  notes: LearningsNote[];
}

/** Reads the whole journal; a missing file is an empty journal. A half-written last line is left for its writer. */
export function readLearnings(file: string): LearningsJournal {
  const out: LearningsJournal = { entries: [], retires: [], notes: [] };
  if (!fs.existsSync(file)) return out;
  const note = (line: number, problem: string) => out.notes.push({ file, line, problem });
  for (const l of readLines(file).lines) {
    if (l.text.trim() === '') continue;
    if (l.oversize) {
      note(l.no, 'the line is too long');
      continue;
    }
    if (l.badUtf8) {
      note(l.no, 'the line is not valid UTF-8');
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(l.text);
    } catch (e) {
      note(l.no, `not JSON (${(e as Error).message})`);
      continue;
    }
    const isRetire = raw !== null && typeof raw === 'object' && (raw as { type?: unknown }).type === 'retire';
    if (isRetire) {
      const r = LearningRetire.safeParse(raw);
      if (r.success) out.retires.push({ line: l.no, retire: r.data });
      else note(l.no, `not a retire line: ${describeIssues(r.error)}`);
    } else {
      const r = LearningEntry.safeParse(raw);
      if (r.success) out.entries.push({ line: l.no, entry: r.data });
      else note(l.no, `not a learning: ${describeIssues(r.error)}`);
    }
  }
  return out;
}

/** A new learning id, sorting by time like event ids. */
export function newLearningId(nowMs: number): string {
  return `lrn_${uuidv7(nowMs).replace(/-/g, '')}`;
}

/** A learning's text as stored: redacted, whitespace-collapsed, bounded (cut with a mark). */
export function learningText(text: string, redactor: Redactor): string {
  const t = redactor.text(text).replace(/\s+/g, ' ').trim();
  return t.length <= LEARNING_TEXT_MAX ? t : `${cutHead(t, LEARNING_TEXT_MAX)} [cut]`;
}

/** Tags as stored: redacted, lower-cased, unique, bounded. */
export function learningTags(tags: readonly string[] | undefined, redactor: Redactor): string[] {
  const out = new Set<string>();
  for (const t of tags ?? []) {
    const v = cutHead(redactor.text(t).trim().toLowerCase(), LEARNING_TAG_MAX);
    if (v) out.add(v);
  }
  return [...out].slice(0, LEARNING_TAGS_MAX);
}

export interface NewLearning {
  kind: LearningKind;
  text: string;
  tags?: readonly string[];
  sessionId: string;
  eventId: string;
  wakeId: string | null;
}

/** Appends one learning in one write (redacted and bounded here) and returns it as stored. */
export function appendLearning(home: Home, agentId: string, l: NewLearning, o: { clock: Clock; redactor: Redactor }): LearningEntry {
  const now = o.clock.now();
  const entry: LearningEntry = {
    id: newLearningId(now),
    kind: l.kind,
    text: learningText(l.text, o.redactor),
    tags: learningTags(l.tags, o.redactor),
    session_id: l.sessionId,
    event_id: l.eventId,
    wake_id: l.wakeId,
    at: iso(now),
  };
  appendLines(learningsPaths(home, agentId).journal, [JSON.stringify(LearningEntry.parse(entry))], { durable: true });
  return entry;
}

/**
 * Appends a retire line for `id`. The id must be a learning of the journal
 * (not_found otherwise); retiring one twice appends nothing the second time.
 */
export function retireLearning(home: Home, agentId: string, id: string, clock: Clock): { id: string; already: boolean } {
  const file = learningsPaths(home, agentId).journal;
  const j = readLearnings(file);
  if (!LEARNING_ID.test(id) || !j.entries.some((e) => e.entry.id === id)) throw notFound(`agent ${agentId} has no learning ${JSON.stringify(id)} (its learnings.jsonl lists them)`);
  const key = merged(j.entries.find((e) => e.entry.id === id)!.entry);
  const now = mergeLearnings(j).find((g) => g.key === key);
  if (now?.retired) return { id, already: true };
  const retired: LearningRetire = { type: 'retire', id, at: iso(clock.now()) };
  appendLines(file, [JSON.stringify(retired)], { durable: true });
  return { id, already: false };
}

/** Whether the journal already holds a learning made from this event (a correction is made once per confirmation). */
export function hasLearningFrom(j: LearningsJournal, eventId: string): boolean {
  return j.entries.some((e) => e.entry.event_id === eventId);
}

/** The key learnings merge by: the kind and the text, case and spacing and end punctuation aside. */
export function merged(e: Pick<LearningEntry, 'kind' | 'text'>): string {
  return `${e.kind}\u0000${e.text.toLowerCase().replace(/\s+/g, ' ').replace(/[\s.!;:,]+$/, '').trim()}`;
}

/** Learnings merged: one per kind and normalised text. */
export interface MergedLearning {
  /** What it merges by (merged()). */
  key: string;
  /** The first learning's id (any of `ids` retires it). */
  id: string;
  ids: string[];
  kind: LearningKind;
  /** The newest wording. */
  text: string;
  tags: string[];
  /** How many times it was learned (since it was last retired). */
  count: number;
  first_at: string;
  last_at: string;
  sessions: string[];
  /** Retired by a person, and not learned again since. */
  retired: boolean;
  /** The journal line of its newest learning (the order "newest" means). */
  last_line: number;
}

/**
 * The journal merged: learnings of one kind and normalised text are one,
 * counted; a retire line retires the merged learning its id belongs to as of
 * that line, so the same text learned again later comes back (counted from
 * then). Most repeated first, then newest; retired ones are kept, marked.
 */
export function mergeLearnings(j: LearningsJournal): MergedLearning[] {
  const keyOfId = new Map<string, string>();
  for (const { entry } of j.entries) keyOfId.set(entry.id, merged(entry));
  type Ev = { line: number; entry?: LearningEntry; retireKey?: string };
  const evs: Ev[] = [...j.entries.map(({ line, entry }) => ({ line, entry })), ...j.retires.flatMap(({ line, retire }) => (keyOfId.has(retire.id) ? [{ line, retireKey: keyOfId.get(retire.id)! }] : []))];
  evs.sort((a, b) => a.line - b.line);
  const groups = new Map<string, MergedLearning>();
  for (const ev of evs) {
    if (ev.retireKey !== undefined) {
      const g = groups.get(ev.retireKey);
      if (g) g.retired = true;
      continue;
    }
    const e = ev.entry!;
    const key = merged(e);
    let g = groups.get(key);
    if (g?.retired) {
      // Learned again after a person retired it: it counts afresh, and the retired one stays listed as such.
      groups.delete(key);
      groups.set(`${key}\u0000retired@${ev.line}`, g);
      g = undefined;
    }
    if (!g) {
      g = { key, id: e.id, ids: [], kind: e.kind, text: e.text, tags: [], count: 0, first_at: e.at, last_at: e.at, sessions: [], retired: false, last_line: ev.line };
      groups.set(key, g);
    }
    g.ids.push(e.id);
    g.count += 1;
    g.text = e.text;
    g.last_at = e.at;
    g.last_line = ev.line;
    for (const t of e.tags) if (!g.tags.includes(t)) g.tags.push(t);
    if (!g.sessions.includes(e.session_id)) g.sessions.push(e.session_id);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || b.last_line - a.last_line);
}
