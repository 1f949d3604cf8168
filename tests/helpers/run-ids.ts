/**
 * Run ids for tests that write a run's lines themselves (a crashed run, a
 * run in progress). The log accepts runtime lines only from a run whose id
 * has the runtime's form and is newer than the last (docs/format.md), so
 * these are well-formed and older than any id the test's clock will mint.
 */
export const FIRST_RUN = `wrun_${'0'.repeat(31)}1`;
export const DEAD_RUN = `wrun_${'0'.repeat(29)}dea`;
