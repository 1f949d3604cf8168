/**
 * What a compaction does to the turns it keeps but prunes (phases 0 and 1),
 * and the VITAL lines that survive every phase (docs/context.md).
 *
 * - Phase 0: thinking blocks of the pruned turns are dropped, except the
 *   newest `keepThinking` of the whole conversation and any that hold a
 *   VITAL line.
 * - Phase 1: a tool result of the pruned turns longer than `pruneOver`
 *   characters is cut to its head and tail around a note, and the VITAL
 *   lines of the part left out are kept between them.
 *
 * Both are pure functions of the messages and the compaction's record, so a
 * conversation rebuilt from the log prunes exactly the same blocks.
 */
import type { AssistantBlock, Message, ToolResultBlock, UserBlock } from '../model/provider.js';
import { cutHead, cutTail } from '../foundation/text-cut.js';

/** A line that must survive compaction: [VITAL], #vital, #critical, [!], or one starting ERROR: / WARNING:. */
const VITAL_LINE = /\[VITAL\]|#vital\b|#critical\b|\[!\]|^\s*(?:ERROR|WARNING):/i;
/** Characters of one VITAL line kept. */
const VITAL_LINE_CHARS = 500;
/** Characters of a pruned tool result kept at its head and at its tail. */
const PRUNED_HEAD = 2000;
const PRUNED_TAIL = 1000;

/** The VITAL lines of a text, in order, each at most VITAL_LINE_CHARS. */
export function vitalLines(text: string): string[] {
  if (!/vital|critical|\[!\]|error:|warning:/i.test(text)) return []; // cheap test first
  const out: string[] = [];
  // The runtime's own notes ("[openboa: …") are not the agent's content, even when they name the marker.
  for (const line of text.split('\n')) if (VITAL_LINE.test(line) && !line.trimStart().startsWith('[openboa:')) out.push(cutHead(line.trim(), VITAL_LINE_CHARS));
  return out;
}

/** The texts of a message's blocks that people and tools wrote (text, tool results, thinking). */
export function blockTexts(m: Message): string[] {
  const out: string[] = [];
  for (const b of m.content as ReadonlyArray<UserBlock | AssistantBlock>) {
    if (b.type === 'text') out.push(b.text);
    else if (b.type === 'tool_result') for (const c of b.content) out.push(c.text);
    else if (b.type === 'thinking') out.push(b.thinking);
  }
  return out;
}

/** A runtime note's opening, defused inside a carried line so it cannot pose as one. */
const defuse = (line: string) => line.replace(/\[openboa/gi, '(openboa');

/**
 * The VITAL lines of messages, at most `max`, oldest first, without repeats.
 * Lines the agent or a person wrote come first; lines found in tool results
 * (files, command output: text from anywhere) fill what room is left and are
 * labelled as such, so they neither crowd out the agent's own nor read as
 * the runtime's word. Linear in the text: the newest are taken first.
 */
export function vitalOf(messages: readonly Message[], max: number): string[] {
  const own: string[] = [];
  const tool: string[] = [];
  const seen = new Set<string>();
  for (let i = messages.length - 1; i >= 0 && own.length < max; i--) {
    const m = messages[i]!;
    const content = m.content as ReadonlyArray<UserBlock | AssistantBlock>;
    for (let k = content.length - 1; k >= 0 && own.length < max; k--) {
      const b = content[k]!;
      const fromTool = b.type === 'tool_result';
      const texts = b.type === 'text' ? [b.text] : b.type === 'thinking' ? [b.thinking] : fromTool ? b.content.map((c) => c.text) : [];
      for (const t of texts) {
        const lines = vitalLines(t);
        for (let j = lines.length - 1; j >= 0; j--) {
          const v = defuse(lines[j]!);
          if (seen.has(v)) continue;
          seen.add(v);
          if (fromTool) {
            if (tool.length < max) tool.push(`(from a tool result) ${v}`);
          } else if (own.length < max) own.push(v);
        }
      }
    }
  }
  return [...own.reverse(), ...tool.slice(0, Math.max(0, max - own.length)).reverse()];
}

export interface PruneRule {
  /** Thinking blocks kept in the whole conversation (the newest). */
  keepThinking: number;
  /** Tool results longer than this many characters are cut. */
  pruneOver: number;
}

const isThinking = (b: { type: string }) => b.type === 'thinking' || b.type === 'redacted_thinking';
const thinkingIsVital = (b: AssistantBlock) => b.type === 'thinking' && vitalLines(b.thinking).length > 0;

/**
 * Phases 0 and 1 on `messages[0 .. upTo)`; the rest is left as it is (and
 * counts for the thinking blocks kept). Returns new messages where one
 * changed; never mutates its input.
 */
export function pruneTurns(messages: readonly Message[], upTo: number, rule: PruneRule): Message[] {
  // Phase 0: which thinking blocks survive, newest first across the whole conversation.
  let keep = rule.keepThinking;
  const survives = new Set<object>();
  for (let i = messages.length - 1; i >= 0 && keep > 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    for (let k = m.content.length - 1; k >= 0 && keep > 0; k--) {
      const b = m.content[k]!;
      if (isThinking(b)) (survives.add(b), (keep -= 1));
    }
  }
  const out = messages.slice();
  for (let i = 0; i < Math.min(upTo, messages.length); i++) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      const kept = m.content.filter((b) => !isThinking(b) || survives.has(b) || thinkingIsVital(b));
      // A turn of thinking alone keeps its content non-empty with a note (the API refuses an empty turn).
      if (kept.length !== m.content.length) out[i] = { role: 'assistant', content: kept.length ? kept : [{ type: 'text', text: '(thinking left out)' }] };
    } else {
      let changed = false;
      const content = m.content.map((b) => {
        if (b.type !== 'tool_result') return b;
        const cut = pruneResult(b, rule.pruneOver);
        if (cut !== b) changed = true;
        return cut;
      });
      if (changed) out[i] = { role: 'user', content };
    }
  }
  return out;
}

/** A tool result cut to head + VITAL lines of the middle + tail, when longer than `over`. */
function pruneResult(b: ToolResultBlock, over: number): ToolResultBlock {
  const total = b.content.reduce((a, c) => a + c.text.length, 0);
  if (total <= over) return b;
  const text = b.content.map((c) => c.text).join('\n');
  const head = cutHead(text, PRUNED_HEAD);
  const tail = cutTail(text, PRUNED_TAIL);
  const middle = text.slice(head.length, text.length - tail.length);
  const vital = vitalLines(middle);
  const note = `[openboa: ${middle.length} characters of this old tool result are left out to keep the context small${vital.length ? `; its VITAL lines follow` : ''}. The whole result is in the session log.]`;
  const body = [head, note, ...vital, tail].join('\n');
  return { ...b, content: [{ type: 'text', text: body }] };
}
