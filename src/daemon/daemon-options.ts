import type { Shard } from './shard.js';

/** What a daemon is started with (daemon.ts; the CLI's `openboa daemon` options, docs/daemon.md). */
export interface DaemonOptions {
  concurrency: number;
  /** Polling (poll-watches.ts) and the home's doorbell (ring-reader.ts) instead of native events (network filesystems). */
  poll: boolean;
  /** With `poll`: the interval of the polling round over every session, ms (default POLL_MAX_MS; longer when it would cost more than POLL_CPU_SHARE of a core). */
  pollIntervalMs?: number;
  /** Period of the safety sweep, ms. */
  sweepMs: number;
  json: boolean;
  /** Where operator lines go (stdout in the CLI). */
  write: (line: string) => void;
  leaseStaleMs?: number;
  /** Width of the operator's terminal, for clipping what the agent said (default 120). */
  columns?: number;
  /** `--shard i/n`: the sessions this daemon watches and sweeps (shard.ts); others only when stray (stray-pickup.ts). */
  shard?: Shard | null;
  /** How often stray work outside the shard is looked for, ms (default a quarter of the lease's stale time). */
  strayMs?: number;
}
