/**
 * The agent's plan for people (`openboa status`): what
 * runtime/plan.json holds, the session's last successful `todo` call
 * (run/plan-file.ts writes it from the log). A cache: a file that is
 * missing, unreadable, not a regular file (a symlink, a FIFO) or not a
 * PlanFile reads as no plan.
 */
import path from 'node:path';
import { PlanFile } from '../schema/index.js';
import { readStateFile } from '../foundation/state-file.js';
import type { SessionStore } from '../store/session-store.js';

/** Larger than any plan the schema admits (50 items of 500 characters, JSON-escaped): a bigger file is not ours. */
const MAX_PLAN_BYTES = 1024 * 1024;

/** The session's plan, or null when it has none (it never called `todo`, or runtime/ has not caught up). */
export function planView(store: SessionStore, id: string): PlanFile | null {
  // Never through a symlink, never blocking on a FIFO: without bubblewrap the agent can write runtime/.
  const f = readStateFile(path.join(store.paths(id).runtime, 'plan.json'), MAX_PLAN_BYTES);
  if (!f) return null;
  try {
    const parsed = PlanFile.safeParse(JSON.parse(f.text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
