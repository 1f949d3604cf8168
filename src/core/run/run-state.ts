/**
 * Per-run state of the hooks, in the open (loop-hooks.ts): a hook that needs
 * to remember something for the length of a run declares a slot, typed, and
 * reads it through the run's context. The run creates the state when it
 * opens and drops it with the context, so nothing of a run outlives it in a
 * module-level map, and two runs of one process never share a slot.
 */

/** A slot a hook declares once (module level): its name (for people) and how a run's value starts. */
export interface RunSlot<T> {
  readonly name: string;
  init(): T;
}

export const runSlot = <T>(name: string, init: () => T): RunSlot<T> => ({ name, init });

/** One run's slots, made when they are first read. */
export class RunState {
  private readonly values = new Map<RunSlot<unknown>, unknown>();

  /** The run's value of `slot` (made by its init() the first time). A value meant to change is an object the hook mutates. */
  get<T>(slot: RunSlot<T>): T {
    if (!this.values.has(slot)) this.values.set(slot, slot.init());
    return this.values.get(slot) as T;
  }
}
