/**
 * Tool output over the environment's limit is saved whole to a file in the
 * workspace, and the model gets the head, the tail and the path — never a
 * silently cut answer.
 */
import type { VirtualFs } from '../sandbox/virtual-fs.js';
import { cutHead, cutTail } from '../text-cut.js';
import { writeFileIn } from './file-tools.js';

/** Where saved outputs go, inside /workspace. */
export const OUTPUT_DIR = '/workspace/.openboa/tool-output';

export function limitOutput(text: string, limit: number, o: { vfs: VirtualFs; toolUseId: string }): string {
  if (text.length <= limit) return text;
  const virtual = `${OUTPUT_DIR}/${o.toolUseId}.txt`;
  let saved = '';
  try {
    // Written beneath the mounts like any file tool: a symlink the agent planted at .openboa cannot redirect it.
    writeFileIn(o.vfs, virtual, text);
    saved = `the whole output (${text.length} characters) is in ${virtual}`;
  } catch (e) {
    saved = `the whole output (${text.length} characters) could not be saved: ${(e as Error).message}`;
  }
  const part = Math.max(200, Math.floor((limit - 200) / 2));
  // Never between the halves of a surrogate pair: the result is logged and sent to the model as is.
  const head = cutHead(text, part);
  const tail = cutTail(text, part);
  return `${head}\n\n[... output truncated: ${saved}; read it with read or grep ...]\n\n${tail}`;
}
