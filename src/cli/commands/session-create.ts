import { createSession } from '../../core/session-ops.js';
import { UsageError, type CommandSpec } from '../command.js';

export const sessionCreate: CommandSpec = {
  path: ['session', 'create'],
  summary: 'create a session and print its id',
  options: {
    agent: { type: 'string', value: 'A', description: 'the agent (agents/<A>/agent.yaml); required' },
    env: { type: 'string', value: 'E', description: "the environment (environments/<E>.yaml); default: the agent's" },
    title: { type: 'string', value: 'T', description: 'a title for people' },
  },
  async run(ctx, { flags }) {
    const agent = flags.agent;
    if (typeof agent !== 'string' || agent === '') {
      throw new UsageError('missing --agent A (usage: openboa session create --agent A [--env E] [--title T])');
    }
    const snap = createSession(ctx.store, {
      agent,
      env: typeof flags.env === 'string' ? flags.env : undefined,
      title: typeof flags.title === 'string' ? flags.title : undefined,
    });
    ctx.out.result({ id: snap.id, agent_id: snap.agent_id, environment_id: snap.environment_id, title: snap.title, status: snap.status }, snap.id);
  },
};
