/**
 * What a session waits on, as `status` and `send --wait` print it: each tool
 * use a person must answer, with the command that answers it (an
 * escalation with its numbered options).
 */
import type { EscalateInput } from '../core/schema/index.js';

export interface WaitingItem {
  id: string;
  name: string;
  kind: 'tool' | 'custom';
  escalation?: EscalateInput | null;
}

const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

export function waitingLines(sessionId: string, items: readonly WaitingItem[]): string[] {
  if (items.length === 0) return [];
  const lines = [`waiting on ${items.length} answer(s):`];
  for (const a of items) {
    const esc = a.escalation;
    if (esc) {
      lines.push(`  ${a.id}  escalation: ${oneLine(esc.situation, 160)}`);
      esc.options.forEach((o, i) => lines.push(`      ${i + 1}. ${oneLine(o, 120)}${esc.recommendation === i + 1 ? '  (recommended)' : ''}`));
      lines.push(`      confidence ${esc.confidence}; answer: openboa resolve ${sessionId} ${a.id} --pick N | --message M`);
      continue;
    }
    lines.push(
      a.kind === 'tool'
        ? `  ${a.id}  ${a.name}: openboa confirm ${sessionId} ${a.id} --allow|--deny [--message M]`
        : `  ${a.id}  ${a.name}: openboa tool-result ${sessionId} ${a.id} <text> [--error]`,
    );
  }
  return lines;
}
