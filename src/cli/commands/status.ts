import { stopLabel } from '../stop-label.js';
import { waitingLines } from '../waiting-lines.js';
import { sessionStatus } from '../../core/ops/session-ops.js';
import { runningDaemon } from '../../core/foundation/daemon-presence.js';
import type { CliContext, CommandInput } from '../command.js';
import { cacheReadShare, describeContextCut, type SessionSnapshot } from '../../core/schema/index.js';
import { cutHead } from '../../core/foundation/text-cut.js';
import { TAIL_GRACE_MS } from '../../core/store/jsonl.js';
import { redactFor } from '../session-redactor.js';
import { escalationsOf } from '../../core/ops/resolve-escalation.js';
import { childrenOf, type ChildView } from '../../core/views/children-view.js';
import { treeOf, type TreeCensus } from '../../core/delegation/session-tree.js';
import { SPAWN_RATE_WINDOW_MS } from '../../core/delegation/spawn-limits.js';
import { planView } from '../../core/views/plan-view.js';
import { planSummary } from '../../core/tools/todo-tool.js';
import type { PlanFile } from '../../core/schema/index.js';

/** `text` on one line (its first non-empty line when `first`), at most `n` characters. */
function oneLine(text: string, n: number, first = false): string {
  const t = (first ? (text.split('\n').find((l) => l.trim() !== '') ?? '') : text).replace(/\s+/g, ' ').trim();
  return t.length > n ? `${cutHead(t, n - 1)}…` : t;
}

const INDENT = ' '.repeat(11);

/**
 * Where the session's outcomes stand: the open one (state, iteration of
 * max, the last evaluation's verdict), then the pending ones; with neither,
 * how the last one ended.
 */
function outcomeLines(s: SessionSnapshot): string[] {
  const lines: string[] = [];
  const o = s.outcome;
  if (o) {
    lines.push(`outcome    ${o.outcome_id}  ${o.state}, evaluation ${o.iteration + 1} of ${o.max_iterations}  "${oneLine(o.description, 60)}"`);
    const last = o.iterations.at(-1);
    if (last) lines.push(`${INDENT}last evaluation (${last.iteration + 1}): ${last.result}: ${oneLine(last.explanation, 100, true)}`);
  }
  s.pending_outcomes.forEach((p, i) => lines.push(`${o || i > 0 ? INDENT : 'outcome    '}${p.outcome_id}  pending (the next run takes it in)  "${oneLine(p.description, 60)}"`));
  if (lines.length) return lines;
  const done = s.outcome_evaluations.findLast((x) => x.completed_at !== null);
  if (!done) return lines;
  // An interrupted outcome may end before any evaluation: its iteration says nothing then.
  const at = done.result === 'interrupted' ? '' : ` at evaluation ${done.iteration + 1}`;
  lines.push(`outcome    ${done.outcome_id}  ${done.result}${at} (${done.completed_at})  "${oneLine(done.description, 60)}"`);
  if (done.explanation) lines.push(`${INDENT}${oneLine(done.explanation, 100, true)}`);
  return lines;
}

/** The session's children (docs/delegation.md), and for each one waiting on a person, how to answer it. */
function childLines(children: ChildView[]): string[] {
  if (children.length === 0) return [];
  const lines = [`children   ${children.length}: ${children.filter((c) => c.status === 'requires_action').length} waiting for a person`];
  for (const c of children) {
    const status = c.status === 'idle' && c.stop_reason ? `idle (${c.stop_reason})` : c.status;
    const cost = c.cost_usd === null ? '' : `  $${c.cost_usd.toFixed(4)}`;
    lines.push(`  ${c.session_id}  ${c.agent}  ${status}${c.title ? `  "${oneLine(c.title, 60)}"` : ''}${cost}`);
    for (const a of c.waiting_on) {
      lines.push(
        a.kind === 'tool'
          ? `      ${a.id}  ${a.name}: openboa confirm ${c.session_id} ${a.id} --allow|--deny [--message M]`
          : `      ${a.id}  ${a.name}: openboa tool-result ${c.session_id} ${a.id} <text> [--error]`,
      );
    }
  }
  return lines;
}

/**
 * The session's tree (docs/delegation.md, "Limits over the tree"): its
 * size, recent spawns and refused spawns, with the last refused elsewhere
 * in it; then the spawns refused in this session (session.spawn_refused).
 */
function treeLines(s: SessionSnapshot, tree: TreeCensus | null): string[] {
  const lines: string[] = [];
  if (tree) {
    const root = tree.root_session_id === s.id ? 'this session is its root' : `root ${tree.root_session_id}`;
    const refused = tree.spawns_refused ? `; ${tree.spawns_refused} spawn(s) refused in it` : '';
    lines.push(`tree       ${root}; ${tree.partial ? 'at least ' : ''}${tree.sessions} session(s), ${tree.spawned_since} spawned in the last minute${refused}`);
    const last = tree.last_refusal;
    if (last && last.session_id !== s.id) lines.push(`${INDENT}the last refused by ${last.session_id} at ${last.at}: ${oneLine(last.message, 160)}`);
  }
  const own = s.spawn_refusals.last;
  if (own) lines.push(`spawns     ${s.spawn_refusals.count} refused here; the last at ${own.at}: ${oneLine(own.message, 160)}`);
  return lines;
}

const MARK = { done: '[x]', in_progress: '[>]', pending: '[ ]' } as const;

/** The agent's plan (runtime/plan.json, its last `todo` call): a summary, then each step with its mark. */
function planLines(plan: PlanFile | null): string[] {
  if (!plan) return [];
  return [`plan       ${planSummary(plan.items)} (updated ${plan.updated_at})`, ...plan.items.map((i) => `  ${MARK[i.status]} ${oneLine(i.content, 120)}`)];
}

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  redactFor(ctx, args.id as string);
  const st = await sessionStatus(ctx.store, ctx.deps.clock, args.id as string);
  const s = st.snapshot;
  const { journals: _journals, reported: _reported, ...snapshot } = s;
  const escalations = escalationsOf(ctx.store, s.id, st.requires_action);
  const requiresAction = st.requires_action.map((a) => (escalations.has(a.id) ? { ...a, escalation: escalations.get(a.id) } : a));
  const children = childrenOf(ctx.store, s);
  const tree = treeOf(ctx.store, s, ctx.deps.clock.now(), SPAWN_RATE_WINDOW_MS);
  const plan = planView(ctx.store, s.id);
  // Any daemon of the home, on any host: the same answer as send's and doctor's.
  const daemon = await runningDaemon(ctx.home);
  ctx.out.result({ ...snapshot, cache_read_share: cacheReadShare(s.usage), lease: st.lease, daemon, requires_action: requiresAction, due_wakes: st.due_wakes, next_wake_at: st.next_wake_at, children_status: children, tree, plan }, () => {
    const lines = [
      `session    ${s.id}${s.title ? `  "${oneLine(s.title, 120)}"` : ''}`,
      `agent      ${s.agent_id}   environment ${s.environment_id}`,
      `status     ${s.status}${s.stop_reason ? ` (${stopLabel(s)})` : ''}${s.retry_at ? `, retry at ${s.retry_at}${s.last_error?.code ? ` (after ${s.last_error.code})` : ''}` : ''}`,
      ...(s.paused ? [`paused     since ${s.paused.since}${s.paused.reason ? `: ${s.paused.reason}` : ''}; no run starts until openboa resume ${s.id}`] : []),
      ...(s.archived_at ? [`archived   since ${s.archived_at}; never woken until openboa archive ${s.id} --undo`] : []),
      `lease      ${st.lease.held ? `held${st.lease.owner ? ` by pid ${st.lease.owner.pid} on ${st.lease.owner.host} (${st.lease.owner.purpose}${st.lease.owner.wake_id ? ` ${st.lease.owner.wake_id}` : ''})` : ''}` : 'free'}`,
      `daemon     ${daemon ? `running${daemon.pid ? ` (pid ${daemon.pid}${daemon.host ? ` on ${daemon.host}` : ''})` : ''}` : 'none running on this home: nothing runs this session until one starts (openboa daemon)'}`,
      `last run   ${s.last_wake_id ?? '-'}`,
      ...(s.last_error ? [`last error ${s.last_error.message}${s.last_error.code ? ` (${s.last_error.code}, ${s.last_error.at})` : ` (${s.last_error.at})`}`] : []),
      ...(s.context_cut ? [`context    cut to fit the window (${s.context_cut.event_id}, ${s.context_cut.at}): ${describeContextCut(s.context_cut)}; ${s.context_cut.why}`] : []),
      `usage      ${s.usage.input_tokens} in, ${s.usage.output_tokens} out, ${s.usage.model_requests} model requests; ${Math.round(cacheReadShare(s.usage) * 100)}% of input read from the prompt cache (${s.usage.cache_read_input_tokens} tokens)`,
      `pending    ${st.pending_events.length} event(s)${st.pending_events.length ? `: ${st.pending_events.map((p) => `${p.id} (${p.type}, line ${p.line})`).join(', ')}` : ''}`,
    ];
    lines.push(...outcomeLines(s));
    lines.push(...planLines(plan));
    lines.push(...waitingLines(s.id, st.requires_action.map((a) => ({ ...a, escalation: escalations.get(a.id) ?? null }))));
    lines.push(...childLines(children));
    lines.push(...treeLines(s, tree));
    lines.push(`wakes      ${s.pending_wakes.length} pending (${st.due_wakes} due), ${s.wakes_consumed} consumed, ${s.wakes_cancelled} cancelled; next ${st.next_wake_at ?? '-'}`);
    for (const [file, n] of [['events.jsonl', s.held_back.events], ['wake-queue.jsonl', s.held_back.wake_queue]] as const) {
      if (n) lines.push(`unfinished ${n} byte(s) at the end of ${file} have no final newline yet; the daemon reads them once they do (or seals them after ${TAIL_GRACE_MS / 1000} s)`);
    }
    if (st.unreported_errors.length) {
      lines.push(`bad lines  ${st.unreported_errors.length} not yet reported in the log:`);
      for (const r of st.unreported_errors) lines.push(`  ${r.message}`);
    }
    return lines.join('\n');
  });
}
