/**
 * runtime/egress.jsonl: one line per connection the egress proxy or
 * web_fetch took or refused (schema/network.ts, EgressLine), so a person
 * and the agent itself (/runtime/egress.jsonl) can see what went out and
 * what was stopped. Appended, one write per line, redacted with the run's
 * redactor. Bounded: past MAX_LOG_BYTES the file becomes egress.1.jsonl
 * (replacing the one before) and a new one starts, so the two hold at most
 * twice that.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Redactor } from '../foundation/redact.js';
import type { EgressLine } from '../schema/index.js';

export const EGRESS_LOG = 'egress.jsonl';
/** 1 MiB: some ten thousand connections. */
export const MAX_LOG_BYTES = 1024 * 1024;

export type EgressLogger = (line: EgressLine) => void;

/** A logger appending to runtime/egress.jsonl. Must not throw: runtime/ is a record, and a failed append loses one line. */
export function egressLog(runtimeDir: string, redactor: Pick<Redactor, 'text'>, maxBytes = MAX_LOG_BYTES): EgressLogger {
  const file = path.join(runtimeDir, EGRESS_LOG);
  return (line) => {
    try {
      const text = `${redactor.text(JSON.stringify(line))}\n`;
      let size = 0;
      try {
        size = fs.statSync(file).size;
      } catch {
        // no log yet
      }
      if (size > 0 && size + text.length > maxBytes) fs.renameSync(file, path.join(runtimeDir, 'egress.1.jsonl'));
      fs.appendFileSync(file, text);
    } catch {
      // runtime/ is a record, not the truth: a full disk loses a line, never a connection
    }
  };
}
