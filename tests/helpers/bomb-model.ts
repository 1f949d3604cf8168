/**
 * The model of a spawn bomb: a port that answers every fresh task (a user
 * turn that is not tool results) with FAN_OUT spawn_session calls, and the
 * spawns' results with a short text. The agent behind it names itself in
 * `delegates`, so every child does the same.
 */
import type { ModelProvider, ModelRequest } from '../../src/core/model/provider.js';

export const FAN_OUT = 4;

export interface BombOptions {
  /** The agent each spawn names (default `self`). */
  agent?: string;
  /** Runs first on each request; the answer waits for it (a test holds requests there). */
  onRequest?: (req: ModelRequest) => void | Promise<void>;
}

/** Answers a fresh task with FAN_OUT spawns, and the spawns' results with a short text. */
export function bombModel(o: BombOptions = {}) {
  const requests: ModelRequest[] = [];
  let n = 0;
  const model: ModelProvider = {
    name: 'bomb',
    async complete(req) {
      requests.push(req);
      await o.onRequest?.(req);
      const last = req.messages.at(-1);
      const answered = last?.role === 'user' && last.content.some((b) => b.type === 'tool_result');
      n += 1;
      return {
        content: answered ? [{ type: 'text', text: 'spawned my helpers' }] : Array.from({ length: FAN_OUT }, (_, k) => ({ type: 'tool_use' as const, id: `toolu_bomb_${n}_${k}`, name: 'spawn_session', input: { agent: o.agent ?? 'self', message: 'do the same: split this in four' } })),
        stop_reason: answered ? 'end_turn' : 'tool_use',
        usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
    },
  };
  return { model, requests };
}

