/**
 * The capabilities whose events the core folds and converts through their
 * kinds (kinds/event-kind.ts): one line each. The fold (store/fold.ts), the
 * conversation (run/conversation.ts) and steering read this table; they
 * name no capability themselves.
 */
import type { EventType, PendingEvent, SessionSnapshot } from '../schema/index.js';
import type { Capability, ConversationKind, EventKind, FoldKind, ToolUseView } from './event-kind.js';
import type { SessionEvent } from '../schema/index.js';
import { outcomes } from './outcomes.js';
import { delegation } from './delegation.js';
import { pause } from './pause.js';
import { context } from './context.js';
import { guards } from './guards.js';
import { mcp } from './mcp.js';

export const CAPABILITIES: readonly Capability[] = [outcomes, delegation, pause, context, guards, mcp];

/** The table is keyed by type; each entry was checked against its type where its capability declared it. */
type AnyKind = EventKind<any>;

/**
 * The kinds of each event type, in CAPABILITIES order. Several capabilities
 * may fold the same type (delegation and outcomes both look at a
 * define_outcome); only one may say how it enters the conversation.
 */
const byType = new Map<string, AnyKind[]>();
for (const c of CAPABILITIES) {
  for (const [type, kind] of Object.entries(c.kinds) as Array<[string, AnyKind]>) {
    const list = byType.get(type) ?? [];
    if (kind.conversation && list.some((k) => k.conversation)) throw new Error(`event kinds: two capabilities say how ${type} enters the conversation (${c.name} is the second)`);
    list.push(kind);
    byType.set(type, list);
  }
}

const NONE: readonly AnyKind[] = [];

/** The kinds registered for `type` (none for the core's own types). */
export function kindsOf(type: string): readonly AnyKind[] {
  return byType.get(type) ?? NONE;
}

/** The fold sides registered for `type`. */
export function foldKinds(type: string): ReadonlyArray<FoldKind<any>> {
  return kindsOf(type).flatMap((k) => (k.fold ? [k.fold] : []));
}

/** How `type` enters the conversation, when a capability says. */
export function conversationKind(type: string): ConversationKind<any> | undefined {
  return kindsOf(type).find((k) => k.conversation)?.conversation;
}

/** Whether a running run takes a pending user event of `type` in at its next step (user.message always is). */
export function takenMidRun(type: string): boolean {
  return type === 'user.message' || kindsOf(type).some((k) => k.midRun === true);
}

/**
 * A tool use the tool policy decides and the run executes, as the policy
 * sees it: a built-in's agent.tool_use itself, a capability's (an MCP call)
 * through its kind; null for anything else (a custom tool use waits for its
 * client, and is not one).
 */
export function toolUseView(e: SessionEvent): ToolUseView | null {
  if (e.type === 'agent.tool_use') return e;
  const k = kindsOf(e.type).find((x) => x.asToolUse);
  return k?.asToolUse ? k.asToolUse(e) : null;
}

/** The fields the capabilities derive after a fold. */
export function finishFold(s: SessionSnapshot): void {
  for (const c of CAPABILITIES) c.finish?.(s);
}

/** The capabilities' reactions to a run taking pending user events in. */
export function takeIn(s: SessionSnapshot, taken: readonly PendingEvent[], at: string): void {
  for (const c of CAPABILITIES) c.takeIn?.(s, taken, at);
}

export type { EventType };
