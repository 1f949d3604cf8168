/**
 * runtime/relations.json (docs/delegation.md): the session's place in its
 * tree — its parent, its depth, and each child with its agent, status and
 * cost. Written as a run starts, and again as it ends (an afterRun hook),
 * so the children spawned or reported during the run are in it. A cache,
 * rebuilt from the parent's log and each child's session.json.
 */
import { relationsOf } from '../views/children-view.js';
import type { SessionSnapshot } from '../schema/index.js';
import type { AfterRunHook, RunService } from './loop-hooks.js';
import type { RunContext } from './run-context.js';

export function writeRelations(ctx: RunContext, snap: SessionSnapshot): void {
  try {
    ctx.files.json('relations.json', relationsOf(ctx.rt.store, snap));
  } catch {
    // runtime/ is a cache: the next run writes it again
  }
}

/** Rewrites relations.json when the run ends; never changes the ending. */
export function relationsAtRunEnd(): AfterRunHook {
  return {
    afterRun(ctx, _journal, ending, snap) {
      if (!ctx.control.silenced) writeRelations(ctx, snap);
      return ending;
    },
  };
}

/** The run service that writes runtime/relations.json as the run starts. */
export function relationsStartFile(): RunService {
  return { name: 'relations file', startFiles: (ctx) => writeRelations(ctx, ctx.startSnapshot) };
}
