/**
 * Checks events against the Managed Agents event types of @anthropic-ai/sdk
 * 1.12.0 (tests/fixtures/managed-agents-events.schema.json, generated from
 * the SDK's .d.ts; SPEC §4). A small validator for the keywords that file
 * uses. `additionalProperties: false` is honoured except for the fields SPEC §4
 * names as our own extensions; `processed_at` is derived, so it is filled in
 * from `created_at` before checking.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './home.js';

type Schema = Record<string, unknown>;
const doc = JSON.parse(fs.readFileSync(path.join(REPO, 'tests', 'fixtures', 'managed-agents-events.schema.json'), 'utf8')) as { definitions: Record<string, Schema> };

/** Fields of our own that the SDK's types do not have (SPEC §4: "extra fields are fine"). */
export const EXTENSIONS = new Set([
  'created_at',
  'wake_id',
  'model_tool_use_id',
  'trigger',
  'processed_event_ids',
  'wakes',
  'continuation',
  'created_at_of',
  'cache_read_share',
  'context',
  'proof',
  'inbox',
  'reason',
  'retry_at',
  'code',
  'line',
  'file',
  'event_id',
  'thinking',
  'signature',
  'redacted_data',
  'summary_path',
  'summary',
  'depth',
  'title',
  'delivery_key',
  'tree_usage',
  // span.model_request_end, span.outcome_evaluation_end: what the request(s) cost, USD (docs/delegation.md).
  'cost_usd',
  'vital',
  'kept_from_line',
  'pruned_before_line',
  'keep_thinking',
  'prune_over',
  'phases',
  'usage',
  'model_requests',
  'tokens_before',
  'tokens_after',
  'format',
  // user.define_outcome: our own check and the files the rubric grader reads (docs/outcomes.md).
  'check',
  'files',
  // span.model_request_start: the request's model, and the fallback note (docs/context.md).
  'model',
  'fallback',
]);

export function hasSchema(type: string): boolean {
  return Object.hasOwn(doc.definitions, type);
}

function typeOk(v: unknown, t: string): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return false;
  }
}

function check(v: unknown, s: Schema, at: string, errs: string[]): void {
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/definitions/', '');
    const target = doc.definitions[name];
    if (!target) return void errs.push(`${at}: unknown $ref ${s.$ref}`);
    return check(v, target, at, errs);
  }
  if (Array.isArray(s.anyOf)) {
    const branches = (s.anyOf as Schema[]).map((b) => {
      const e: string[] = [];
      check(v, b, at, e);
      return e;
    });
    if (!branches.some((e) => e.length === 0)) errs.push(`${at}: matches none of ${s.anyOf.length} alternatives (${branches.map((e) => e[0]).join(' | ')})`);
    return;
  }
  if ('const' in s && v !== s.const) errs.push(`${at}: expected ${JSON.stringify(s.const)}, got ${JSON.stringify(v)}`);
  if (Array.isArray(s.enum) && !s.enum.includes(v)) errs.push(`${at}: expected one of ${JSON.stringify(s.enum)}, got ${JSON.stringify(v)}`);
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => typeOk(v, t))) return void errs.push(`${at}: expected ${types.join('|')}, got ${JSON.stringify(v)?.slice(0, 60)}`);
  }
  if (Array.isArray(v) && s.items && typeof s.items === 'object') v.forEach((x, i) => check(x, s.items as Schema, `${at}[${i}]`, errs));
  if (typeOk(v, 'object')) {
    const o = v as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const r of (s.required ?? []) as string[]) if (!(r in o)) errs.push(`${at}: missing required ${r}`);
    for (const [k, x] of Object.entries(o)) {
      if (props[k]) check(x, props[k] as Schema, `${at}.${k}`, errs);
      else if (s.additionalProperties === false && !EXTENSIONS.has(k)) errs.push(`${at}: unexpected field ${k}`);
    }
  }
}

/** Errors of one event as the runtime wrote it; [] when it validates. */
export function validateEvent(e: Record<string, unknown>): string[] {
  const type = String(e.type);
  const s = doc.definitions[type];
  if (!s) return [`${type}: no such event type in the SDK's union`];
  const errs: string[] = [];
  check({ ...e, processed_at: e.processed_at ?? e.created_at }, s, type, errs);
  return errs;
}

/**
 * Validates every line of a log that has a Managed Agents type (the
 * runtime's; user.* lines are a person's, unless `also` picks them);
 * returns "line N: error" strings, and how many lines `also` picked.
 */
export function validateLog(file: string, opts: { also?: (e: Record<string, unknown>) => boolean } = {}): { checked: number; errors: string[]; alsoChecked: number } {
  const errors: string[] = [];
  let checked = 0;
  let alsoChecked = 0;
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((l, i) => {
      if (!l.trim()) return;
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(l);
      } catch {
        return; // hand-written garbage is not the runtime's
      }
      const also = opts.also?.(e) === true;
      if (!also && (!hasSchema(String(e.type)) || String(e.type).startsWith('user.'))) return;
      checked++;
      if (also) alsoChecked++;
      for (const err of validateEvent(e)) errors.push(`line ${i + 1}: ${err}`);
    });
  return { checked, errors, alsoChecked };
}
