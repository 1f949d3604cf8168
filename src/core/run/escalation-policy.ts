/**
 * The escalate tool's filing, as a wrapper of the tool policy
 * (docs/context.md, "Escalation"). A valid `escalate` call is filed as a
 * custom tool use: the reply is recorded as `agent.custom_tool_use` and the
 * session pauses on requires_action until a person answers (`openboa
 * resolve`). Two calls are filed as ordinary allowed tool uses instead and
 * run at once (tools/escalate-tool.ts): an invalid one (its result names
 * the bad field; nobody is asked a malformed question) and one that
 * resolves itself: it has a recommendation, its confidence is above the
 * agent's `escalation.auto_resolve_above`, and the tool is not always_ask.
 *
 * This is why ToolPolicy.classify() sees the call's input: the filing of an
 * escalation depends on its confidence and recommendation.
 */
import { EscalateInput, type EscalationSettings } from '../schema/index.js';
import { autoResolves } from '../tools/escalate-tool.js';
import type { ToolPolicy } from './loop-hooks.js';

export const ESCALATE = 'escalate';

export function escalationPolicy(inner: ToolPolicy, settings: EscalationSettings): ToolPolicy {
  return {
    ...inner,
    classify(name, input) {
      const c = inner.classify(name, input);
      if (name !== ESCALATE || c.kind !== 'tool' || c.permission === 'deny') return c;
      const parsed = EscalateInput.safeParse(input ?? {});
      if (!parsed.success) return { kind: 'tool', permission: 'allow' };
      if (c.permission === 'allow' && autoResolves(parsed.data, settings.auto_resolve_above)) return c;
      return { kind: 'custom' };
    },
  };
}
