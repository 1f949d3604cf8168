import { listAgents, listEnvironments } from '../../core/definitions/definitions.js';
import { OpenboaError, notFound } from '../../core/foundation/errors.js';
import { createSession } from '../../core/ops/create-session.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';

/**
 * A missing agent or environment is not_found (exit 3, as for a session id
 * that does not exist: the name is well formed, the thing is not there); the
 * message names the ones this home has, so the next try can be right.
 */
function withChoices(ctx: CliContext, e: unknown): unknown {
  if (!OpenboaError.is(e) || e.code !== 'not_found') return e;
  const [kind, list, hint] = /^agent "/.test(e.message)
    ? ['agents', listAgents(ctx.home), 'openboa init creates the bundled ones']
    : /^environment "/.test(e.message)
      ? ['environments', listEnvironments(ctx.home), 'add environments/<E>.yaml']
      : [null, [], ''];
  if (!kind) return e;
  return notFound(`${e.message}; ${list.length ? `${kind} in this home: ${list.join(', ')}` : `this home (${ctx.home.root}) has no ${kind}: ${hint}`} (openboa agents lists them)`);
}

export async function run(ctx: CliContext, { flags }: CommandInput): Promise<number | void> {
  const agent = flags.agent;
  if (typeof agent !== 'string' || agent === '') {
    throw new UsageError('missing --agent A (usage: openboa session create --agent A [--env E] [--title T])');
  }
  let snap;
  try {
    snap = createSession(ctx.store, {
      agent,
      env: typeof flags.env === 'string' ? flags.env : undefined,
      title: typeof flags.title === 'string' ? flags.title : undefined,
    });
  } catch (e) {
    throw withChoices(ctx, e);
  }
  ctx.out.result({ id: snap.id, agent_id: snap.agent_id, environment_id: snap.environment_id, title: snap.title, status: snap.status }, snap.id);
}
