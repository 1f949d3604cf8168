/**
 * Tool output over the environment's limit is saved whole to a file in the
 * workspace, and the model gets the head, the tail and the path — never a
 * silently cut answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { VirtualFs } from '../sandbox/virtual-fs.js';

/** Where saved outputs go, inside /workspace. */
export const OUTPUT_DIR = '/workspace/.openboa/tool-output';

export function limitOutput(text: string, limit: number, o: { vfs: VirtualFs; toolUseId: string }): string {
  if (text.length <= limit) return text;
  const virtual = `${OUTPUT_DIR}/${o.toolUseId}.txt`;
  let saved = '';
  try {
    const r = o.vfs.resolve(virtual, { write: true });
    fs.mkdirSync(path.dirname(r.host), { recursive: true });
    fs.writeFileSync(r.host, text);
    saved = `the whole output (${text.length} characters) is in ${virtual}`;
  } catch (e) {
    saved = `the whole output (${text.length} characters) could not be saved: ${(e as Error).message}`;
  }
  const part = Math.max(200, Math.floor((limit - 200) / 2));
  const head = text.slice(0, part);
  const tail = text.slice(-part);
  return `${head}\n\n[... output truncated: ${saved}; read it with read or grep ...]\n\n${tail}`;
}
