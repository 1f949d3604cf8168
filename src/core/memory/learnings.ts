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
import type { Clock } from '../foundation/clock.js';
import { iso } from '../foundation/clock.js';
import type { Home } from '../foundation/home.js';
import { uuidv7 } from '../foundation/ids.js';
import type { Redactor } from '../foundation/redact.js';
import { OpenboaError, notFound } from '../foundation/errors.js';
import { appendLines, readLines } from '../store/jsonl.js';
import { describeIssues } from '../store/parse-line.js';
import { cutHead } from '../foundation/text-cut.js';
import { LEARNING_ID, LEARNING_TAG, LEARNING_TAG_MAX, LEARNING_TAGS_MAX, LEARNING_TEXT_MAX, LearningEntry, LearningRetire, type LearningKind, type LearningSource } from '../schema/index.js';

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

/**
 * Characters a learning never keeps: C0 and C1 controls, DEL, NEL, the line
 * and paragraph separators, zero-width and bidi controls, BOM. A learning
 * is one line of a later system prompt: none of these may break it into
 * lines that pose as a section of their own, or reorder what a person reads.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const oneLine = (t: string) => t.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();

/**
 * A learning's text as stored: one line (oneLine), redacted, bounded (cut
 * with a mark). Collapsed before the redactor runs too, so a secret split
 * by a newline or doubled spaces is still the secret it matches.
 */
export function learningText(text: string, redactor: Redactor): string {
  const t = oneLine(redactor.text(oneLine(text)));
  return t.length <= LEARNING_TEXT_MAX ? t : `${cutHead(t, LEARNING_TEXT_MAX)} [cut]`;
}

/** A tag's characters: lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit (the same when applied twice). */
const slug = (t: string) => t.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '');

/**
 * Tags as stored: redacted, made a slug, redacted again (replacing
 * characters can turn a tag into a piece of a secret: `sk proj 9f3a…` into
 * `sk-proj-9f3a…`), made a slug again, bounded (LEARNING_TAG), unique.
 */
export function learningTags(tags: readonly string[] | undefined, redactor: Redactor): string[] {
  const out = new Set<string>();
  for (const t of tags ?? []) {
    const v = cutHead(slug(redactor.text(slug(redactor.text(oneLine(t))))), LEARNING_TAG_MAX).replace(/-+$/, '');
    if (LEARNING_TAG.test(v)) out.add(v);
  }
  return [...out].slice(0, LEARNING_TAGS_MAX);
}

/**
 * The journal's size past which nothing more is appended (budget_exhausted,
 * `data.limit: learnings_journal`): a runaway agent cannot make every later run read and merge
 * megabytes. A person retires or archives learnings to make room.
 */
export const LEARNINGS_JOURNAL_MAX_BYTES = 1024 * 1024;

export interface NewLearning {
  kind: LearningKind;
  /** `person` only for a correction the runtime makes from a person's deny message. */
  source: LearningSource;
  text: string;
  tags?: readonly string[];
  sessionId: string;
  eventId: string;
  wakeId: string | null;
}

/** Appends one learning in one write (redacted and bounded here) and returns it as stored. */
export function appendLearning(home: Home, agentId: string, l: NewLearning, o: { clock: Clock; redactor: Redactor }): LearningEntry {
  const file = learningsPaths(home, agentId).journal;
  if (journalBytes(file) >= LEARNINGS_JOURNAL_MAX_BYTES) throw new OpenboaError('budget_exhausted', `the learnings journal of agent ${agentId} holds ${LEARNINGS_JOURNAL_MAX_BYTES / 1024} KB, its limit: a person retires or archives learnings to make room`, { data: { limit: 'learnings_journal' } });
  const now = o.clock.now();
  const entry: LearningEntry = {
    id: newLearningId(now),
    kind: l.kind,
    text: learningText(l.text, o.redactor),
    tags: learningTags(l.tags, o.redactor),
    source: l.source,
    session_id: l.sessionId,
    event_id: l.eventId,
    wake_id: l.wakeId,
    at: iso(now),
  };
  appendLines(file, [JSON.stringify(LearningEntry.parse(entry))], { durable: true });
  return entry;
}

function journalBytes(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
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
  /** How many times it was learned (before a person retired it). */
  count: number;
  /** Who wrote it: `person` when any of its learnings is a person's correction. */
  source: LearningSource;
  /** Times it was learned again after a person retired it (it stays retired). */
  relearned: number;
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
 * counted; a retire line retires the merged learning its id belongs to, and
 * it stays retired: the same text learned again later only counts
 * `relearned` (a session cannot bring back what a person retired). Learned
 * in the most sessions first (repeats within one session do not outrank
 * other learnings), then newest; retired ones are kept, marked.
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
      g.relearned += 1;
      continue;
    }
    if (!g) {
      g = { key, id: e.id, ids: [], kind: e.kind, text: e.text, tags: [], count: 0, source: 'agent', relearned: 0, first_at: e.at, last_at: e.at, sessions: [], retired: false, last_line: ev.line };
      groups.set(key, g);
    }
    g.ids.push(e.id);
    g.count += 1;
    g.text = e.text;
    g.last_at = e.at;
    g.last_line = ev.line;
    if (e.source === 'person') g.source = 'person';
    for (const t of e.tags) if (!g.tags.includes(t)) g.tags.push(t);
    if (!g.sessions.includes(e.session_id)) g.sessions.push(e.session_id);
  }
  return [...groups.values()].sort((a, b) => b.sessions.length - a.sessions.length || b.last_line - a.last_line);
}
