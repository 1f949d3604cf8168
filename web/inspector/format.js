// Formatting for people: times, money, tokens, and why a session waits.
export const usd = (n) => (typeof n === 'number' ? `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}` : '–');
export const tokens = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n ?? 0));

export function ago(iso, now = Date.now()) {
  if (!iso) return '–';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  const a = Math.abs(s);
  const t = a < 60 ? `${a}s` : a < 3600 ? `${Math.round(a / 60)}m` : a < 86400 ? `${Math.round(a / 3600)}h` : `${Math.round(a / 86400)}d`;
  return s >= 0 ? `${t} ago` : `in ${t}`;
}

export const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '–');

/** Why a session is where it is, in words (from the session object and, when loaded, its overview). */
export function whyItWaits(s, o) {
  if (s.archived_at) return 'archived';
  if (o?.paused || s.paused) return `paused${o?.paused?.reason ? `: ${o.paused.reason}` : ''}`;
  if (s.status === 'running') return 'running';
  if (s.status === 'rescheduling') return `retrying${o?.retry_at ? ` at ${when(o.retry_at)}` : ''}${o?.last_error ? ` after ${o.last_error.code ?? o.last_error.type}` : ' after an error'}`;
  if (s.status === 'terminated') return `terminated${s.stop_reason ? ` (${s.stop_reason.type})` : ''}`;
  const waiting = o?.waiting ?? [];
  if (waiting.length) {
    return `waiting for ${waiting.map((w) => (w.escalation ? 'an escalation' : w.kind === 'tool' ? `a confirmation (${w.name})` : `a custom tool (${w.name})`)).join(', ')}`;
  }
  if (s.stop_reason?.type === 'requires_action') return 'waiting for an answer';
  if (s.pending_events > 0) return `${s.pending_events} event(s) to take in`;
  if (o?.next_wake_at) return `revisit at ${when(o.next_wake_at)}`;
  return s.stop_reason ? `idle (${s.stop_reason.type})` : 'idle';
}

/** The state of the newest outcome, or '–'. */
export function outcomeState(s) {
  const last = s.outcome_evaluations?.[s.outcome_evaluations.length - 1];
  return last ? `${last.result ?? 'open'}${last.iteration != null ? ` (#${last.iteration})` : ''}` : '–';
}
