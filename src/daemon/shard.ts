/**
 * `--shard i/n`: which sessions a daemon watches and sweeps when several
 * share a home. A session belongs to shard `fnv1a(id) mod n`: stable (the
 * same on every host, whatever the order or number of sessions), and even
 * (UUIDv7 ids hash uniformly). Belonging decides only who looks: any daemon
 * may run any session whose lease is free (stray-pickup.ts).
 */
export interface Shard {
  index: number;
  count: number;
}

/** Parses "i/n" (0 <= i < n <= 1024); throws with what was expected. */
export function parseShard(text: string): Shard {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > 1024 || index >= count) throw new Error(`expected i/n with 0 <= i < n <= 1024 (e.g. 0/3), got "${text}"`);
  return { index, count };
}

/** FNV-1a, 32 bits, of the id's UTF-16 code units (ids are ASCII). */
export function shardOf(id: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

/** Whether the daemon of `shard` (null: the only one, or one of several that each look at everything) looks at `id`. */
export function owns(shard: Shard | null, id: string): boolean {
  return shard === null || shard.count === 1 || shardOf(id, shard.count) === shard.index;
}
