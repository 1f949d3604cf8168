/**
 * The observer that publishes a run's reply previews to the process's
 * PreviewHub (preview-hub.ts), for sessions someone watches: a block's
 * start, then its text as the model streams it, redacted.
 *
 * Redaction of a text still growing: a secret (or a run of FRAGMENT_MIN of
 * its characters) may be cut across deltas, so a piece is published only
 * once it cannot become part of a secret: the end of the text that is a
 * piece of some secret is held back (Redactor.unsettledTail), and a prefix
 * goes out only when its redaction is also the start of the whole text's
 * redaction so far (nothing in it is the beginning of a run the rest
 * completes). When the reply is complete (reply()), the rest of each
 * block goes out, redacted as its event will be, so the previews add up to
 * the recorded event. With no secrets, every piece goes out as it comes.
 *
 * A block first heard while nobody watched the session is never previewed
 * (a preview must open at its start). What it keeps lives for one model
 * request (reset by request()): the blocks of the reply being streamed.
 */
import type { Redactor } from '../foundation/redact.js';
import type { RunObserver } from './loop-hooks.js';
import { previewHub, type PreviewHub } from './preview-hub.js';

interface Block {
  /** The model's text so far. */
  raw: string;
  /** How much of `raw` was published, and as what (redacted). */
  rawSent: number;
  sent: string;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

export function previewPublisher(hub: PreviewHub = previewHub): RunObserver {
  /** Blocks of this request: previewed (a Block) or not (null: first heard unwatched, or a thinking block). */
  let blocks = new Map<string, Block | null>();
  return {
    request() {
      blocks = new Map();
    },
    reply(ctx, _req, outcome) {
      if (!('response' in outcome) || !hub.watched(ctx.sessionId)) return;
      // The text is whole now: the rest of each block, redacted as its event will be.
      for (const [eventId, b] of blocks) {
        if (!b) continue;
        const all = ctx.env.redactor.text(b.raw);
        if (all.length > b.sent.length && all.startsWith(b.sent)) hub.publish(ctx.sessionId, { kind: 'delta', runId: ctx.runId, eventId, text: all.slice(b.sent.length) });
        b.sent = all;
        b.rawSent = b.raw.length;
      }
    },
    delta(ctx, d) {
      let b = blocks.get(d.eventId);
      if (b === undefined) {
        const watched = hub.watched(ctx.sessionId);
        b = watched && d.kind === 'text' ? { raw: '', rawSent: 0, sent: '' } : null;
        blocks.set(d.eventId, b);
        // agent.thinking previews are start-only (the SDK's contract): no text follows.
        if (watched) hub.publish(ctx.sessionId, { kind: 'start', runId: ctx.runId, eventId: d.eventId, type: d.kind === 'text' ? 'agent.message' : 'agent.thinking' });
      }
      if (b === null) return;
      b.raw += d.text;
      const piece = nextPiece(ctx.env.redactor, b);
      if (piece !== '' && hub.watched(ctx.sessionId)) hub.publish(ctx.sessionId, { kind: 'delta', runId: ctx.runId, eventId: d.eventId, text: piece });
    },
  };
}

/** What of `b` may go out now, redacted (see the file's comment); '' for nothing yet. */
function nextPiece(r: Redactor, b: Block): string {
  if (!r.active) {
    const piece = b.raw.slice(b.rawSent);
    b.rawSent = b.raw.length;
    return piece;
  }
  let cut = b.raw.length - r.unsettledTail(b.raw);
  if (cut > 0 && isHigh(b.raw.charCodeAt(cut - 1))) cut -= 1;
  if (cut <= b.rawSent) return '';
  const pre = r.text(b.raw.slice(0, cut));
  if (!pre.startsWith(b.sent) || !r.text(b.raw).startsWith(pre)) return '';
  const piece = pre.slice(b.sent.length);
  b.rawSent = cut;
  b.sent = pre;
  return piece;
}
