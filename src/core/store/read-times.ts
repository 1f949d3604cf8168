/**
 * The time shown for an event whose line has no created_at (a hand-written
 * line): the one the run that took it in recorded (its status_running's
 * `created_at_of`), or, while it is still pending, the one session.json
 * holds (`read_at`), so every read of the log shows the same value. A
 * line that got neither (a hand-written line the fold refused) keeps
 * `readTime`: its time is not known, and readers say so (event-view.ts).
 */
import type { ParsedEventLine } from './parse-line.js';

/** `lines` with pinned times filled in; `pending` (the pending events' read times) is asked only if needed. */
export function pinReadTimes(lines: ParsedEventLine[], pending: () => Map<string, string>): ParsedEventLine[] {
  if (!lines.some((l) => l.kind === 'event' && l.readTime)) return lines;
  const pins = new Map<string, string>();
  for (const l of lines) if (l.kind === 'event' && l.event.type === 'session.status_running') for (const [id, at] of Object.entries(l.event.created_at_of ?? {})) pins.set(id, at);
  let held: Map<string, string> | null = null;
  return lines.map((l) => {
    if (l.kind !== 'event' || !l.readTime) return l;
    const at = pins.get(l.event.id) ?? (held ??= pending()).get(l.event.id);
    if (!at) return l; // still readTime: no time was ever recorded for it
    const { readTime: _pinned, ...rest } = l;
    return { ...rest, event: { ...l.event, created_at: at } };
  });
}
