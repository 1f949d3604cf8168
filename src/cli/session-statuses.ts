/**
 * The statuses `openboa sessions --status` filters on (`paused`: held by
 * openboa pause, whatever its status). A module of its own so that the
 * command catalog (read for --help, loading nothing from core) and the
 * sessions command share it without importing each other.
 */
export const SESSION_STATUSES = ['idle', 'running', 'rescheduling', 'terminated', 'paused'] as const;
