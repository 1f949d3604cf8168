/**
 * The persistent shell's variables as they cross the terminal: the names it
 * may be told to export (ENV_NAME), how a command's end reports them
 * (`env -0`, base64, bounded by ENV_REPORT_MAX: parseEnv), and the bash that
 * sets any value byte for byte in lines a terminal takes (assignLines,
 * exportScript). Values are never interpolated into a script as text.
 */
import { ENV_NAME } from '../schema/secret-ref.js';

/** Characters of base64 per line the shell is sent (a terminal's line holds 4095: a longer one is cut). */
export const CHUNK = 3000;

/**
 * Bytes of exported variables a command's end reports at most. The shell cuts
 * `env -0` one byte past it (so the end marker stays bounded whatever the
 * agent exports), and a cut environment is not reported at all.
 */
export const ENV_REPORT_MAX = 192 * 1024;
/** `env -0`'s output, base64-encoded by the shell, as variables (names that are not shell names are left out: exported functions). */
export function parseEnv(b64: string): Record<string, string> | null {
  const raw = Buffer.from(b64, 'base64');
  if (raw.length === 0 || raw.length > ENV_REPORT_MAX) return null;
  const out: Record<string, string> = {};
  for (const kv of raw.toString('utf8').split('\0')) {
    const eq = kv.indexOf('=');
    if (eq > 0 && ENV_NAME.test(kv.slice(0, eq))) out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/** The longest variable name exportScript passes on (it is written twice on one terminal line). */
const EXPORT_NAME_MAX = 1000;

/**
 * Bash lines that set the shell variable `name` to `value`, whatever bytes
 * it holds: base64-encoded, in lines of CHUNK characters (a terminal's line
 * holds 4095: a longer one is cut, and the shell never starts), read back
 * with `read -d ''` (which keeps trailing newlines, unlike $(...)).
 */
export function assignLines(name: string, value: string): string {
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  let out = `__ob_v=''\n`;
  for (let i = 0; i < b64.length; i += CHUNK) out += `__ob_v+='${b64.slice(i, i + CHUNK)}'\n`;
  return `${out}IFS= read -r -d '' ${name} < <(printf %s "$__ob_v" | base64 -d)\n`;
}

/** Bash that exports `vars` as they are (assignLines). Names are checked against ENV_NAME and EXPORT_NAME_MAX; others are left out. */
export function exportScript(vars: Record<string, string>): string {
  let out = '';
  for (const [k, v] of Object.entries(vars)) {
    if (ENV_NAME.test(k) && !k.startsWith('__ob') && k.length <= EXPORT_NAME_MAX) out += `${assignLines(k, v)}export ${k}\n`;
  }
  return out;
}
