/**
 * The Redactor's cost (src/core/foundation/redact.ts): it runs on every log write,
 * every tool output and every runtime/ file. Redacts 1 MB of text (a log's
 * worth of JSON lines, and random hex, which looks most like secrets) with a
 * few secrets and with many, without a hit and with a hundred pieces of
 * secrets in it, and one typical event through `deep` (what appendEvents
 * does per event). For contrast, the exact-value-only replacement the
 * Redactor used before it matched pieces of secrets (one `includes` and
 * `split`/`join` per secret). Target: O(text length): 1 MB in a few ms,
 * whatever the number of secrets.
 */
import { randomBytes } from 'node:crypto';
import { FRAGMENT_MIN, Redactor } from '../src/core/foundation/redact.js';
import { median, round, timeSync } from './stats.js';

const MB = 1 << 20;

/** About 1 MB of event lines, the kind appendEvents and the tools pass through. */
function logText(): string {
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < MB; i++) {
    const l = JSON.stringify({ type: 'agent.tool_result', id: `sevt_${i.toString(16).padStart(12, '0')}`, content: [{ type: 'text', text: `total ${i * 7}\n-rw-r--r-- 1 agent agent ${i * 13} Nov 23 10:02 notes-${i}.md\nexit 0` }] });
    lines.push(l);
    n += l.length + 1;
  }
  return lines.join('\n').slice(0, MB);
}

const secretsOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`SECRET_${i}`, randomBytes(20).toString('hex')]));

/** `text` with `hits` pieces (30 characters) of the secrets put in at even spacing. */
function withHits(text: string, secrets: Record<string, string>, hits: number): string {
  const values = Object.values(secrets);
  const step = Math.floor(text.length / (hits + 1));
  let out = '';
  for (let i = 0; i < hits; i++) out += text.slice(i * step, (i + 1) * step) + values[i % values.length]!.slice(5, 35);
  return out + text.slice(hits * step, text.length - hits * 30);
}

/** The Redactor before pieces were matched: each whole value, longest first. */
function exactOnly(secrets: Record<string, string>) {
  const pairs = Object.entries(secrets).map(([k, v]) => [v, `[REDACTED:${k}]`] as const).sort((a, b) => b[0].length - a[0].length);
  return (s: string) => {
    let out = s;
    for (const [v, m] of pairs) if (out.includes(v)) out = out.split(v).join(m);
    return out;
  };
}

const ms = (xs: number[]) => round(median(xs), 2);

export function benchRedact() {
  const log = logText();
  const hex = randomBytes(MB / 2).toString('hex');
  const few = secretsOf(3);
  const many = secretsOf(100);
  const out: Record<string, unknown> = { bench: 'redact', text_bytes: MB, fragment_min: FRAGMENT_MIN, secret_chars: 40 };
  for (const [name, secrets] of [['3_secrets', few], ['100_secrets', many]] as const) {
    const r = new Redactor(secrets);
    const old = exactOnly(secrets);
    const hit = withHits(log, secrets, 100);
    if (r.text(hit) === hit) throw new Error('the hits were not redacted');
    out[name] = {
      log_no_hit_ms: ms(timeSync(() => void r.text(log), 30)),
      hex_no_hit_ms: ms(timeSync(() => void r.text(hex), 30)),
      log_100_hits_ms: ms(timeSync(() => void r.text(hit), 30)),
      for_contrast_exact_values_only_log_no_hit_ms: ms(timeSync(() => void old(log), 30)),
      build_redactor_ms: round(median(timeSync(() => void new Redactor(secrets), 30)), 3),
    };
  }
  // One event as appendEvents redacts it (every string and key through text()).
  const event = { type: 'agent.tool_use', id: 'sevt_0196f3a2', name: 'bash', input: { command: 'ls -la /workspace && cat notes/todo.md | head -50', timeout: 120 }, processed_at: '2026-11-23T10:02:11.000Z', wake_id: 'wrun_0196f3a2' };
  const r = new Redactor(few);
  const per = timeSync(() => {
    for (let i = 0; i < 1000; i++) r.deep(event);
  }, 50);
  out.deep_one_event_us = { '3_secrets': round(median(per), 3), target: 'a few µs' };
  out.target = 'log_no_hit_ms a few ms per MB, about the same for 3 and 100 secrets';
  return out;
}
