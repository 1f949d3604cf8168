/**
 * The Redactor of a session (its environment's secrets as a given process
 * environment has them, plus the session's overrides), cached per
 * environment and overrides: the indexer redacts what it stores with it, and
 * search results are redacted again with it at output, since the index may
 * hold text that the process which wrote it could not redact (an
 * `openboa reindex` run from a shell without the secret variables).
 *
 * Contracts:
 * - A session whose environment does not load redacts nothing (Redactor.none);
 *   the caller's own run redacts its secrets on top (the tool catalog).
 * - Entries are reused for REDACTOR_TTL_MS (clock of the store's deps), so an
 *   environment edited while the daemon runs is read again soon.
 */
import { SessionOverrides } from '../schema/index.js';
import { Redactor } from '../foundation/redact.js';
import { sessionRedactor } from '../run/environment.js';
import type { SessionStore } from '../store/session-store.js';

/** How long a session's Redactor is reused before its environment is read again, ms. */
export const REDACTOR_TTL_MS = 10_000;

/** What a session's redaction depends on, as the index's `sessions` table holds it. */
export interface RedactionKey {
  environment_id: string | null;
  /** The session's overrides as JSON, or null. */
  overrides: string | null;
}

export class SessionRedactors {
  private readonly cache = new Map<string, { r: Redactor; at: number }>();

  constructor(
    private readonly store: SessionStore,
    /** Where `{secret: {env: NAME}}` values are read (the daemon's environment). */
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  of(k: RedactionKey): Redactor {
    if (!k.environment_id) return Redactor.none;
    const key = `${k.environment_id}\u0000${k.overrides ?? ''}`;
    const now = this.store.deps.clock.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < REDACTOR_TTL_MS) return hit.r;
    let overrides: SessionOverrides = {};
    try {
      overrides = SessionOverrides.parse(k.overrides ? JSON.parse(k.overrides) : {});
    } catch {
      // a session.created the schema accepted always parses again; anything else: the environment's secrets alone
    }
    const r = sessionRedactor(this.store.home, k.environment_id, overrides, this.env);
    if (this.cache.size > 256) this.cache.clear();
    this.cache.set(key, { r, at: now });
    return r;
  }

  /**
   * The Redactor of a session by id, read from its session.json when the
   * index does not know it (a learning's session not indexed yet); none when
   * the session is gone.
   */
  ofSession(sessionId: string, known?: RedactionKey): Redactor {
    if (known) return this.of(known);
    try {
      const snap = this.store.snapshot(sessionId, { persist: false });
      return this.of({ environment_id: snap.environment_id, overrides: snap.overrides ? JSON.stringify(snap.overrides) : null });
    } catch {
      return Redactor.none;
    }
  }
}
