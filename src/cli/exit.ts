/** Exit codes (SPEC §8). */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, busy: 4 } as const;
