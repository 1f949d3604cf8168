/**
 * Durations people write: 90s, 10m, 1h30m, 2d (a bare number is seconds).
 * The one reading of them for the CLI's flags, agent.yaml (`heartbeat.every`)
 * and the agent's tools (`schedule_wake`'s `every`).
 */
import parseDurationText from 'parse-duration';

/** One or more `<number><unit>` groups, with optional spaces: 90s, 10m, 1h30m, "1h 30m", 2d, 1.5h. */
const DURATION_SHAPE = /^(?:\d+(?:\.\d+)?\s*[a-zµ]+\s*)+$/i;
const GROUP = /\d+(?:\.\d+)?\s*[a-zµ]+/gi;
export const EXPECTED_DURATION = 'expected a duration such as 90s, 10m, 1h30m or 2d';

/**
 * Milliseconds of a duration like 90s, 10m, 1h30m, 2d; a bare number is
 * seconds. Units are parse-duration's (s, sec, m, min, h, hr, d, day, w,
 * week, ... and plurals); the shape is checked here first, because
 * parse-duration on its own skips words it does not know ("in 10m please" is
 * 10 minutes there, and "5" is 5 ms), and a duration should say no instead.
 * Returns null when the text is not such a duration.
 */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  if (!DURATION_SHAPE.test(t)) return null;
  for (const group of t.match(GROUP) ?? []) if (parseDurationText(group) === null) return null; // an unknown unit
  const ms = parseDurationText(t);
  return ms === null || !Number.isFinite(ms) ? null : Math.round(ms);
}
