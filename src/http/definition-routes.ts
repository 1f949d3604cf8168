/**
 * /v1/agents and /v1/environments (docs/http.md, "Agents and
 * environments"): list, retrieve, create, update (POST, with an optional
 * `version` that must be the current one) and archive, over the YAML files
 * of the home through core/definitions/definition-store.ts. Each route is a
 * schema, one core call and the resource's shape; the server mounts this
 * under /v1 behind its authentication.
 */
import { Hono, type Context } from 'hono';
import * as z from 'zod';
import type { Runtime } from '../core/run/run-context.js';
import { OpenboaError } from '../core/foundation/errors.js';
import { DefinitionId } from '../core/schema/index.js';
import { archiveDefinition, createDefinition, listDefinitions, retrieveDefinition, updateDefinition, type DefinitionKind, type DefinitionState } from '../core/definitions/definition-store.js';
import { AgentCreateBody, AgentUpdateBody, agentEdit, toAgent } from '../core/definitions/agent-resource.js';
import { EnvironmentCreateBody, EnvironmentUpdateBody, environmentEdit, toEnvironment } from '../core/definitions/environment-resource.js';
import { ApiError, invalidRequest, notFound } from './api-error.js';

/** `beta=true`: the SDK's qualifier on every Managed Agents request. */
const Beta = { beta: z.literal('true').optional() };
const Flag = z.enum(['true', 'false']).transform((v) => v === 'true');

const ListQuery = z.strictObject({
  ...Beta,
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page: z.string().min(1).optional(),
  include_archived: Flag.optional(),
  'created_at[gte]': z.iso.datetime({ offset: true }).optional(),
  'created_at[lte]': z.iso.datetime({ offset: true }).optional(),
});
const RetrieveQuery = z.strictObject({ ...Beta, version: z.coerce.number().int().positive().optional() });
const NoQuery = z.strictObject(Beta);

interface Resource<C, U> {
  kind: DefinitionKind;
  path: string;
  idParam: string;
  create: z.ZodType<C>;
  update: z.ZodType<U>;
  edit: (body: C | U) => Parameters<typeof updateDefinition>[3]['edit'];
  shape: (s: DefinitionState) => object;
}

export function definitionRoutes(rt: Runtime): Hono {
  const app = new Hono();
  mount(app, rt, { kind: 'agent', path: '/agents', idParam: 'agent_id', create: AgentCreateBody, update: AgentUpdateBody, edit: agentEdit, shape: toAgent });
  mount(app, rt, { kind: 'environment', path: '/environments', idParam: 'environment_id', create: EnvironmentCreateBody, update: EnvironmentUpdateBody, edit: environmentEdit, shape: toEnvironment });
  return app;
}

function mount<C extends { name: string; metadata?: Record<string, string> | undefined }, U extends { name?: string | null | undefined; version?: number | undefined; metadata?: Record<string, string | null> | null | undefined }>(
  app: Hono,
  rt: Runtime,
  r: Resource<C, U>,
): void {
  const id = (c: Context) => parse(DefinitionId, c.req.param('id'), r.idParam);

  app.get(r.path, async (c) => {
    const q = parse(ListQuery, c.req.query(), 'query');
    const page = await core(() =>
      listDefinitions(rt, r.kind, {
        limit: q.limit,
        after: q.page === undefined ? undefined : decodeCursor(q.page),
        includeArchived: q.include_archived ?? false,
        createdGte: q['created_at[gte]'],
        createdLte: q['created_at[lte]'],
      }),
    );
    return c.json({ data: page.data.map(r.shape), next_page: page.next === null ? null : encodeCursor(page.next), first_id: page.data[0]?.id ?? null, last_id: page.data.at(-1)?.id ?? null });
  });

  app.post(r.path, async (c) => {
    parse(NoQuery, c.req.query(), 'query');
    const body = parse(r.create, await json(c), 'body');
    const s = await core(() => createDefinition(rt, r.kind, { name: body.name, metadata: body.metadata ?? {}, build: (doc) => r.edit(body)?.(doc) }));
    return c.json(r.shape(s));
  });

  app.get(`${r.path}/:id`, async (c) => {
    const q = parse(RetrieveQuery, c.req.query(), 'query');
    const s = await core(() => retrieveDefinition(rt, r.kind, id(c)));
    // Only the current version's content is kept (its YAML); older ones are in the history by hash only.
    if (q.version !== undefined && q.version !== s.version) throw notFound(`${r.kind} "${s.id}" version ${q.version} (only the current version, ${s.version}, is kept)`);
    return c.json(r.shape(s));
  });

  app.post(`${r.path}/:id`, async (c) => {
    parse(NoQuery, c.req.query(), 'query');
    const key = id(c);
    const body = parse(r.update, await json(c), 'body');
    const s = await core(() => updateDefinition(rt, r.kind, key, { expectedVersion: body.version, name: body.name ?? undefined, metadata: body.metadata ?? undefined, edit: r.edit(body) }));
    return c.json(r.shape(s));
  });

  app.post(`${r.path}/:id/archive`, async (c) => {
    parse(NoQuery, c.req.query(), 'query');
    const s = await core(() => archiveDefinition(rt, r.kind, id(c)));
    return c.json(r.shape(s));
  });
}

/** zod's verdict as the API's 400, naming the first offending field. */
function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const res = schema.safeParse(value);
  if (res.success) return res.data;
  const issue = res.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const field = issue.path.map(String).join('.') || where;
  const what = issue.code === 'unrecognized_keys' ? `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}` : issue.message;
  throw invalidRequest(`${field}: ${what}`);
}

async function json(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw invalidRequest('body: expected a JSON object');
  }
}

/** A core error as the API's: not_found 404, invalid_input 400, conflict 409 (not retried), busy 409 (retried). */
async function core<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (!OpenboaError.is(e)) throw e;
    switch (e.code) {
      case 'not_found':
        throw new ApiError('not_found_error', e.message, false);
      case 'invalid_input':
        throw invalidRequest(e.message);
      case 'conflict':
        throw new ApiError('conflict_error', e.message, false);
      case 'busy':
        throw new ApiError('conflict_error', e.message, true);
      default:
        throw e;
    }
  }
}

/** The page cursor: the last id of the page, opaque to the client. */
const encodeCursor = (id: string) => Buffer.from(`after:${id}`, 'utf8').toString('base64url');
function decodeCursor(page: string): string {
  const text = Buffer.from(page, 'base64url').toString('utf8');
  const id = text.startsWith('after:') ? text.slice(6) : '';
  if (!DefinitionId.safeParse(id).success) throw invalidRequest('page: not a cursor this server gave');
  return id;
}
