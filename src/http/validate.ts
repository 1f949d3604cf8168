/**
 * Reading a request's body and query through a zod schema: the first
 * problem becomes a 400 invalid_request_error that names the field by its
 * path (`events.0.content: expected …`), as the hosted API does.
 *
 * Queries come as the SDK writes them (qs, `arrayFormat: brackets`): a
 * repeated `statuses[]=idle&statuses[]=running` is an array under the key
 * `statuses[]`; any other key keeps its last value.
 */
import type { Context } from 'hono';
import type * as z from 'zod';
import { invalidRequest } from './api-error.js';

/** The first issue of a failed parse, with the field it is about. */
export function describeIssue(error: z.ZodError, root = ''): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const where = [root, ...issue.path.map(String)].filter((p) => p !== '').join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    return `${keys.map((k) => (where ? `${where}.${k}` : k)).join(', ')}: unknown field${keys.length > 1 ? 's' : ''}`;
  }
  return `${where || '(body)'}: ${issue.message}`;
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, root = ''): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidRequest(describeIssue(r.error, root));
  return r.data;
}

/** The JSON body, validated; an empty or non-JSON body is a 400. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch (e) {
    throw invalidRequest(`the body is not JSON: ${(e as Error).message}`);
  }
  return parseWith(schema, value);
}

/** The query, validated (see the module comment for arrays). */
export function queryOf<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const all = c.req.queries();
  const value: Record<string, string | string[]> = {};
  for (const [k, vs] of Object.entries(all)) value[k] = k.endsWith('[]') ? vs : (vs[vs.length - 1] as string);
  return parseWith(schema, value);
}
