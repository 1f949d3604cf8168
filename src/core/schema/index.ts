/** The single source of truth for every on-disk format and tool input. */
export * from './common.js';
export * from './events.js';
export * from './wake-queue.js';
export * from './definitions.js';
export * from './session.js';
export * from './tools.js';
