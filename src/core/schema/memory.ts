/**
 * agent.yaml `memory:` (docs/memory.md): how the agent's memory directory
 * (`agents/<id>/memory/`, mounted at /memory) is offered to its sessions,
 * how much of its MEMORY.md the system prompt carries, and how far
 * cross-session search reaches.
 *
 * The two spellings are both accepted: the shorthand
 * `memory: read_only` (a mode alone) and the block
 * `memory: {mode, prompt_bytes, search_scope}`. Both parse to the block.
 */
import * as z from 'zod';

export const MEMORY_MODES = ['read_write', 'read_only', 'none'] as const;
export const MemoryMode = z.enum(MEMORY_MODES);
export type MemoryMode = z.infer<typeof MemoryMode>;

/** Whose sessions search_sessions sees: this agent's (default) or every agent's in the home. */
export const SearchScope = z.enum(['agent', 'home']);
export type SearchScope = z.infer<typeof SearchScope>;

/** The largest document the memory directory holds (Managed Agents' memory stores: 100 kB). */
export const MEMORY_DOCUMENT_MAX_BYTES = 100_000;

export const MemoryBlock = z.strictObject({
  mode: MemoryMode.default('read_write'),
  /** How much of memory/MEMORY.md the system prompt carries; the rest is cut with a note. */
  prompt_bytes: z.number().int().nonnegative().max(64_000).default(8_000),
  search_scope: SearchScope.default('agent'),
});

/** A bare string is the mode, so a bad one is reported at `memory.mode` with the modes listed. */
export const MemorySettings = z.preprocess((v) => (typeof v === 'string' ? { mode: v } : v), MemoryBlock);
export type MemorySettings = z.output<typeof MemoryBlock>;

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = MemoryBlock.parse({});
