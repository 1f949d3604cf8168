/**
 * One full, compacting garbage collection, for a long-lived process that has
 * just finished a burst of work and is about to idle: the daemon once its
 * start is over (the scan, the search index's catch-up).
 *
 * V8 collects the old generation when allocation asks for it. An idle
 * daemon allocates next to nothing, so the garbage of its start stays in the
 * heap, resident, for as long as it idles: about 7 MB of a 30 MB heap at
 * 10,000 sessions. A plain full collection frees it but leaves the pages it
 * was on half full and committed (the resident set did not move); compacting
 * empties them and gives them back (about 6 MB of resident memory at 10,000
 * sessions: docs/benchmarks.md, idle).
 *
 * `gc` is exposed only to contexts made after `--expose-gc` is set, hence
 * the new context. Compaction on every full GC is turned on for this one
 * collection and off again. Costs one mark-compact of the live heap, on the
 * main thread, once: 70-95 ms for a 20 MB live heap (about the daemon's at
 * 10,000 sessions) on a loaded 2-core machine.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

export function settleHeap(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
