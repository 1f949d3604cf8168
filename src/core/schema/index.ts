/** The single source of truth for every on-disk format and tool input. */
export * from './common.js';
export * from './events.js';
export * from './wake-queue.js';
export * from './definitions.js';
export * from './session.js';
export * from './tools.js';
export * from './outcomes.js';
export * from './context.js';
export * from './pause.js';
export * from './model-settings.js';
export * from './guards.js';
export * from './delegation.js';
export * from './roster.js';
export * from './pricing.js';
export * from './learnings.js';
export * from './memory.js';
export * from './search.js';
