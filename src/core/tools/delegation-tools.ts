/**
 * The delegation tools (docs/delegation.md, "The tools"). A parent (an
 * agent with a roster, agent.yaml `delegates`) hands work to child sessions
 * with spawn_session, follows up with send_to_session and looks at them
 * with list_sessions; a child (a session with a parent) writes to its
 * parent with message_parent. A child is an ordinary session: its own
 * folder, log, environment (the child agent's; nothing of the parent's
 * environment, overrides or secrets is passed on) and runs.
 *
 * What each writes, in this order, so a kill between two writes leaves
 * nothing a later run cannot read:
 *   spawn_session    core/delegation/spawn-child.ts (the limits, the child,
 *                    its task, the parent's records, in that order) → the
 *                    tool result; a refusal is the error result.
 *   send_to_session  user.message to the child → agent.thread_message_sent.
 *   message_parent   agent.thread_message_received in the parent's log, keyed
 *                    `msg:<this tool use's id>` (the parent's fold takes a
 *                    key once).
 * A kill after the child exists and before the tool result: the recovery
 * gives the parent "outcome unknown" for the call, while the child runs and
 * reports like any other (its report names it, so the parent learns of it).
 *
 * Every message crosses from one session to another redacted with the
 * sender's secrets.
 */
import { childrenOf } from '../views/children-view.js';
import { spawnChild } from '../delegation/spawn-child.js';
import { interruptedSinceRun } from '../delegation/spawn-limits.js';
import { ListSessionsInput, MessageParentInput, SendToSessionInput, SpawnSessionInput, type AgentDefinition, type BuiltinToolName } from '../schema/index.js';
import { fail, ok, type Tool, type ToolContext } from './tool.js';

/** Offered to an agent with a roster. */
export const PARENT_TOOLS: readonly BuiltinToolName[] = ['spawn_session', 'send_to_session', 'list_sessions'];
/** Offered to a session with a parent. */
export const CHILD_TOOLS: readonly BuiltinToolName[] = ['message_parent'];

/** Whether the built-in `name` is offered: the parent tools need a roster, message_parent a parent. */
export function delegationToolApplies(name: BuiltinToolName, agent: Pick<AgentDefinition, 'delegates'>, isChild: boolean): boolean {
  if (PARENT_TOOLS.includes(name)) return agent.delegates !== undefined;
  if (CHILD_TOOLS.includes(name)) return isChild;
  return true;
}

/** spawn_session's description, naming this agent's roster (fixed for an agent, so the prompt cache holds). */
export function spawnDescription(agent: Pick<AgentDefinition, 'delegates'>): string {
  const r = agent.delegates;
  const who = r === undefined ? 'none' : r === 'self' ? '"self" (your own agent)' : r.map((x) => JSON.stringify(x)).join(', ');
  return `${spawnSessionTool.description} The agents you may spawn: ${who}.`;
}

const text = (t: string) => [{ type: 'text' as const, text: t }];

function delegationContext(ctx: ToolContext, tool: string) {
  if (!ctx.agent || !ctx.emit || !ctx.runOpenedAt) throw new Error(`${tool} runs only inside a session's run`);
  return { agent: ctx.agent, emit: ctx.emit, openedAt: ctx.runOpenedAt, me: ctx.store.snapshot(ctx.sessionId) };
}

/** Why nothing may be written to another session now (the run was stopped: interrupt, shutdown, lost lease), or null. */
const stopped = (ctx: ToolContext) => (ctx.signal.aborted ? 'not done: this run was stopped first' : null);

/** Whether `id`'s own log names `parentId` as its parent (the parent's record alone could be a hand-written line). */
function isChildOf(ctx: ToolContext, id: string, parentId: string): boolean {
  try {
    return ctx.store.snapshot(id, { persist: false }).parent_session_id === parentId;
  } catch {
    return false;
  }
}

/** message_parent calls one run may make: a child cannot flood its parent's context. */
export const MAX_PARENT_MESSAGES_PER_RUN = 5;

export const spawnSessionTool: Tool<typeof SpawnSessionInput> = {
  name: 'spawn_session',
  description:
    'Hand work to a new child session of one of your delegate agents. It returns at once with the child\'s session id; the child works on its own, and when its run ends its last message comes back to you as a new message. The child sees only `message`, so say everything it needs.',
  input: SpawnSessionInput,
  async run(input, ctx) {
    const { agent, emit, openedAt } = delegationContext(ctx, 'spawn_session');
    const halt = stopped(ctx);
    if (halt) return fail(halt);
    const r = spawnChild(ctx.store, { sessionId: ctx.sessionId, agent, runOpenedAt: openedAt, redactor: ctx.redactor, emit, ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}) }, input, () => ctx.clock.now());
    if (r.kind === 'refused') return fail(r.message);
    return ok(`spawned session ${r.child.id} (agent ${r.agent}, depth ${r.child.depth}). It works on its own; its report comes back to you as a message when its run ends. Follow up with send_to_session, look with list_sessions.`);
  },
};

export const sendToSessionTool: Tool<typeof SendToSessionInput> = {
  name: 'send_to_session',
  description: 'Send a follow-up message to one of your child sessions. It keeps its history and reads your message as the next one; its report comes back to you when that run ends.',
  input: SendToSessionInput,
  async run(input, ctx) {
    const { emit, me, openedAt } = delegationContext(ctx, 'send_to_session');
    const c = Object.hasOwn(me.children, input.session_id) ? me.children[input.session_id] : undefined;
    const halt = stopped(ctx);
    if (halt) return fail(halt);
    if (!c || (ctx.store.exists(input.session_id) && !isChildOf(ctx, input.session_id, ctx.sessionId))) {
      const ids = Object.keys(me.children);
      return fail(`not sent: ${input.session_id} is not one of your child sessions (yours: ${ids.join(', ') || 'none'})`);
    }
    if (!ctx.store.exists(input.session_id)) return fail(`not sent: the child session ${input.session_id} no longer exists`);
    const interrupted = interruptedSinceRun(ctx.store, me, openedAt, ctx.clock.now());
    if (interrupted) return fail(`not sent: ${interrupted}`);
    const msg = ctx.redactor.text(input.message);
    ctx.store.deliverUserEvent(input.session_id, { type: 'user.message', content: text(msg), mandate_at: openedAt, ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}) });
    emit([{ type: 'agent.thread_message_sent', to_session_thread_id: input.session_id, to_agent_name: c.agent, content: text(msg) }]);
    return ok(`sent to ${input.session_id} (agent ${c.agent}); its report comes back to you when its run ends`);
  },
};

export const listSessionsTool: Tool<typeof ListSessionsInput> = {
  name: 'list_sessions',
  description: 'List your child sessions: id, agent, status (running, idle, rescheduling, requires_action: waiting for a person), title, the last report you got and the cost of its tree.',
  input: ListSessionsInput,
  async run(_input, ctx) {
    const { me } = delegationContext(ctx, 'list_sessions');
    const kids = childrenOf(ctx.store, me);
    if (kids.length === 0) return ok('no child sessions');
    return ok(
      kids
        .map((c) => {
          const status = c.status === 'idle' && c.stop_reason ? `idle (${c.stop_reason})` : c.status;
          const report = c.last_report ? `last report: ${c.last_report.stop_reason}` : 'no report yet';
          const cost = c.cost_usd === null ? '' : `  $${c.cost_usd.toFixed(4)}`;
          return `${c.session_id}  ${c.agent}  ${status}${c.title ? `  "${c.title}"` : ''}  ${report}${cost}`;
        })
        .join('\n'),
    );
  },
};

export const messageParentTool: Tool<typeof MessageParentInput> = {
  name: 'message_parent',
  description: 'Send a message to the session that spawned you, while you keep working (your final message reaches it anyway when your run ends). At most 16384 characters.',
  input: MessageParentInput,
  async run(input, ctx) {
    const { agent, me } = delegationContext(ctx, 'message_parent');
    const parent = me.parent_session_id;
    if (!parent) return fail('not sent: this session has no parent');
    const halt = stopped(ctx);
    if (halt) return fail(halt);
    const sent = ctx.runUses?.('message_parent') ?? 0;
    if (sent > MAX_PARENT_MESSAGES_PER_RUN) return fail(`not sent: at most ${MAX_PARENT_MESSAGES_PER_RUN} messages to your parent in one run; your final message reaches it when your run ends`);
    if (!ctx.store.exists(parent)) return fail(`not sent: the parent session ${parent} no longer exists`);
    ctx.store.deliverEvents(parent, [
      {
        type: 'agent.thread_message_received',
        from_session_thread_id: ctx.sessionId,
        from_agent_name: agent.id,
        content: text(ctx.redactor.text(input.message)),
        delivery_key: `msg:${ctx.toolUseId}`,
      },
    ]);
    return ok(`sent to your parent session ${parent}`);
  },
};
