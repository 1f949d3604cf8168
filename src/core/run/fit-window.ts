/**
 * Fitting the conversation into the model's context window, for one request.
 *
 * What the window leaves after the system prompt, the tools and the reply
 * (`room`, counted by the caller) goes first to the note that opens a
 * compacted conversation: the summary and its VITAL lines (fit-opening.ts),
 * cut only when they alone exceed the room less MIN_TURN_TOKENS. The rest of
 * the conversation gets what they leave (at least MIN_TURN_TOKENS), in three
 * steps, each used only when the one before is not enough:
 *
 * 1. Whole old turns are left out (fitToBudget), the newest kept, and the
 *    digest of them (compaction.ts) gets what the kept turns leave: it is
 *    the first thing to shrink.
 * 2. If what is left cannot fit even once step 3 has cut every long text to
 *    its floor (a burst of messages larger than the window, a large image),
 *    the oldest events' blocks are each replaced by one short note naming the
 *    event: id, line, length and its first characters.
 * 3. The longest texts are cut down, longest first, never below CUT_KEEP
 *    characters, each with a note saying how much was left out.
 *
 * So every event a run took in is in the request whole, cut or named, and
 * the summary and VITAL lines are the last things cut. Every step is a pure
 * function of the conversation and the room, so the same log gives the same
 * request; older turns change only when the request must shrink.
 */
import type { AssistantBlock, Message, UserBlock } from '../model/provider.js';
import type { TextBlock } from '../schema/index.js';
import { cutHead } from '../foundation/text-cut.js';
import { originOf, type BlockOrigin, type ConversationView } from './conversation.js';
import { estimateTokens, fitToBudget } from './token-budget.js';
import { digestNote, digestOf, withOpening } from './compaction.js';
import { fitOpening, type FittedOpening } from './fit-opening.js';

/** A text is never cut below this many characters: enough to see what it was. */
export const CUT_KEEP = 2000;
/**
 * The conversation after the opening note always gets at least this many
 * tokens, even past the window: the turn in progress must be sent (named or
 * cut when larger). The note is cut to leave them.
 */
export const MIN_TURN_TOKENS = 1000;
/** Characters of an event's text a naming note quotes. */
const NAMED_HEAD = 120;
/** Room kept for the cut note appended to a cut text (its exact length is a little less). */
const CUT_NOTE_ROOM = 160;

const cutNote = (left: number, total: number) => `\n[openboa: cut here to fit the context window; ${left} of ${total} characters left out. The whole text is in the session log.]`;

export interface FittedMessages {
  messages: Message[];
  /** Estimated tokens of `messages`. */
  tokens: number;
  /** Whole messages left out at the start (named in the digest). */
  dropped: number;
  digest: string | null;
  /** Texts cut down, each with a cut note. */
  cut: number;
  /** Events whose blocks were each replaced by a short note naming them. */
  named: number;
  /** Notes in the request standing for events that could not be read or converted. */
  notRead: number;
  /** The note that opens a compacted conversation, as sent (whole or cut); null when there is none. */
  opening: FittedOpening | null;
}

/**
 * Fits `conv` into `room` tokens (the window less the reply, the system
 * prompt and the tools; below MIN_TURN_TOKENS when they leave less, even
 * below 0); see the module comment. Pure; never mutates its input.
 */
export function fitMessages(conv: ConversationView, room: number): FittedMessages {
  const rest = withoutOpening(conv);
  const open = rest.opening ? fitOpening(rest.opening.summary.text, rest.opening.summary.vital, room - MIN_TURN_TOKENS) : null;
  const whole = open !== null && open.summaryLeftOut === 0 && open.vitalLeftOut === 0;
  // Whole, the view's own block goes (by identity: its estimate is cached, the request unchanged).
  const openBlock: TextBlock | null = rest.opening && open ? (whole ? rest.opening.block : { type: 'text', text: open.text }) : null;
  const restRoom = Math.max(MIN_TURN_TOKENS, room - (openBlock ? estimateTokens(openBlock) : 0));
  if ((open === null || whole) && rest.tokens <= restRoom) {
    return { messages: conv.messages, tokens: conv.tokens, dropped: 0, digest: null, cut: 0, named: 0, notRead: placeholders(conv.messages), opening: open };
  }
  let messages = rest.messages;
  let tokens = rest.tokens;
  let budget = restRoom;
  let dropped = 0;
  let digest: string | null = null;
  if (tokens > restRoom) {
    const f = fitToBudget(messages, restRoom);
    dropped = f.dropped;
    messages = f.messages;
    tokens = f.tokens;
    if (dropped > 0) {
      // The digest comes last: it gets what the kept turns leave (at least its first line).
      digest = digestOf(rest.messages.slice(0, dropped), restRoom - tokens);
      budget = restRoom - estimateTokens(digestNote(digest));
    }
  }
  const notRead = placeholders(messages);
  const named = tokens > budget ? nameToFit(messages, tokens, budget) : { messages, named: 0 };
  const small = shrinkToBudget(named.messages, budget);
  const out = withOpening(small.messages, [...(openBlock ? [openBlock] : []), ...(digest !== null ? [digestNote(digest)] : [])]);
  return { messages: out, tokens: out.reduce((a, m) => a + estimateTokens(m), 0), dropped, digest, cut: small.shrunk, named: named.named, notRead, opening: open };
}

/** The conversation without its opening note (the first block of its first message), and that note; as it is when it has none. */
function withoutOpening(conv: ConversationView): { messages: Message[]; tokens: number; opening: ConversationView['opening'] } {
  const first = conv.messages[0];
  if (!conv.opening || !first || first.role !== 'user' || first.content[0] !== conv.opening.block) return { messages: conv.messages, tokens: conv.tokens, opening: null };
  const content = first.content.slice(1);
  const head: Message[] = content.length ? [{ role: 'user', content }] : [];
  const messages = [...head, ...conv.messages.slice(1)];
  return { messages, tokens: conv.tokens - estimateTokens(first) + (head.length ? estimateTokens(head[0]) : 0), opening: conv.opening };
}

/** Texts of a block that step 3 may cut (text blocks of either role, tool-result texts). */
function textsOf(b: UserBlock | AssistantBlock): string[] {
  if (b.type === 'text') return [b.text];
  if (b.type === 'tool_result') return b.content.map((c) => c.text);
  return [];
}

/** Tokens step 3 can take off a block at most. */
function reducible(b: UserBlock | AssistantBlock): number {
  return textsOf(b).reduce((a, t) => a + Math.max(0, Math.floor((t.length - CUT_KEEP - CUT_NOTE_ROOM) / 4)), 0);
}

/** The blocks of one event in one message: content[from .. to). */
interface Unit {
  m: number;
  from: number;
  to: number;
  origin: BlockOrigin;
}

function unitsOf(messages: readonly Message[]): Unit[] {
  const units: Unit[] = [];
  messages.forEach((msg, m) => {
    if (msg.role !== 'user') return;
    msg.content.forEach((b, i) => {
      const origin = originOf(b);
      if (!origin) return;
      const last = units[units.length - 1];
      if (last && last.m === m && last.to === i && last.origin === origin) last.to = i + 1;
      else units.push({ m, from: i, to: i + 1, origin });
    });
  });
  return units;
}

function placeholders(messages: readonly Message[]): number {
  return unitsOf(messages).filter((u) => u.origin.placeholder).length;
}

/** The note that names one event instead of holding it. */
function namingNote(blocks: readonly UserBlock[], o: BlockOrigin, result: boolean): string {
  const texts = blocks.flatMap(textsOf);
  const chars = texts.reduce((a, t) => a + t.length, 0);
  const others = blocks.filter((b) => b.type === 'image' || b.type === 'document').map((b) => b.type);
  const what = [`${chars} characters`, ...(others.length ? [`${others.length} ${others.length === 1 ? others[0] : 'image/document'} block(s)`] : [])].join(' and ');
  const head = texts.join(' ').replace(/\s+/g, ' ').trim();
  const start = head ? `, starting ${JSON.stringify(head.length > NAMED_HEAD ? `${cutHead(head, NAMED_HEAD)}…` : head)}` : '';
  const where = o.line !== null ? `events.jsonl line ${o.line}` : 'line unknown';
  return `[openboa: ${o.eventType} ${o.eventId} (${where}) is named here only, to fit the context window: ${what}${start}. The whole ${result ? 'result' : 'event'} is in the session log.]`;
}

/**
 * Step 2: replaces the oldest events' blocks by naming notes until the
 * request could fit once step 3 cut every long text to CUT_KEEP. Notes for
 * unreadable events are left alone (they are notes already).
 */
function nameToFit(messages: Message[], tokens: number, room: number): { messages: Message[]; named: number } {
  let floor = tokens;
  for (const m of messages) for (const b of m.content) floor -= reducible(b);
  if (floor <= room) return { messages, named: 0 };
  const replace = new Map<number, Array<{ from: number; to: number; blocks: UserBlock[] }>>();
  let named = 0;
  for (const u of unitsOf(messages)) {
    if (floor <= room) break;
    if (u.origin.placeholder) continue;
    const blocks = messages[u.m]!.content.slice(u.from, u.to) as UserBlock[];
    const result = blocks.length === 1 && blocks[0]!.type === 'tool_result';
    const note = namingNote(blocks, u.origin, result);
    const instead: UserBlock[] = result
      ? [{ ...(blocks[0] as Extract<UserBlock, { type: 'tool_result' }>), content: [{ type: 'text', text: note }] }]
      : [{ type: 'text', text: note }];
    const before = blocks.reduce((a, b) => a + estimateTokens(b) - reducible(b), 0);
    const saved = before - Math.ceil(JSON.stringify(instead).length / 4);
    if (saved <= 0) continue;
    floor -= saved;
    named += 1;
    const list = replace.get(u.m) ?? [];
    list.push({ from: u.from, to: u.to, blocks: instead });
    replace.set(u.m, list);
  }
  if (named === 0) return { messages, named };
  const out = messages.map((msg, m) => {
    const list = replace.get(m);
    if (!list) return msg;
    const content: UserBlock[] = [];
    let i = 0;
    for (const r of list) {
      for (; i < r.from; i++) content.push(msg.content[i] as UserBlock);
      for (const b of r.blocks) content.push(b);
      i = r.to;
    }
    for (; i < msg.content.length; i++) content.push(msg.content[i] as UserBlock);
    return { role: 'user', content } as Message;
  });
  return { messages: out, named };
}

/**
 * Step 3: when the request is still over `budget` (a 10 MB message, a huge
 * pasted file), the largest text and tool-result texts are cut down, longest
 * first, never below CUT_KEEP characters, until it fits. The full text stays
 * in the log. Returns new messages; `shrunk` counts the texts cut.
 */
export function shrinkToBudget(messages: Message[], budget: number): { messages: Message[]; shrunk: number } {
  let total = messages.reduce((a, m) => a + estimateTokens(m), 0);
  if (total <= budget) return { messages, shrunk: 0 };
  // Every text in a block we may cut: [message, block, inner text index or -1].
  type Spot = { m: number; b: number; inner: number; chars: number };
  const spots: Spot[] = [];
  messages.forEach((m, mi) =>
    (m.content as unknown as Array<Record<string, unknown>>).forEach((blk, bi) => {
      if (blk.type === 'text') spots.push({ m: mi, b: bi, inner: -1, chars: String(blk.text).length });
      if (blk.type === 'tool_result') (blk.content as Array<{ text: string }>).forEach((c, ci) => spots.push({ m: mi, b: bi, inner: ci, chars: c.text.length }));
    }),
  );
  spots.sort((x, y) => y.chars - x.chars);
  const out = messages.map((m) => ({ ...m, content: m.content.map((c) => ({ ...c })) })) as Message[];
  let shrunk = 0;
  for (const sp of spots) {
    if (total <= budget) break;
    const keep = Math.max(CUT_KEEP, Math.floor(sp.chars - (total - budget) * 4 - CUT_NOTE_ROOM));
    const note = cutNote(sp.chars - keep, sp.chars);
    if (keep + note.length >= sp.chars) continue;
    const blk = out[sp.m]!.content[sp.b] as unknown as Record<string, unknown>;
    // One unit fewer when `keep` falls inside a surrogate pair; the note counts what was really left out.
    const cut = (t: string) => {
      const kept = cutHead(t, keep);
      return `${kept}${cutNote(t.length - kept.length, t.length)}`;
    };
    if (sp.inner === -1) blk.text = cut(String(blk.text));
    else blk.content = (blk.content as Array<{ type: 'text'; text: string }>).map((c, i) => (i === sp.inner ? { ...c, text: cut(c.text) } : c));
    total -= Math.floor((sp.chars - keep - note.length) / 4);
    shrunk += 1;
  }
  return { messages: out, shrunk };
}
