/**
 * Tool output over the environment's limit is saved whole to a file in the
 * workspace, and the model gets the head, the tail and the path — never a
 * silently cut answer.
 */
import { isFailure, type Sandbox } from '../sandbox/sandbox.js';
import { cutHead, cutTail } from '../foundation/text-cut.js';

/** Where saved outputs go, inside /workspace. */
export const OUTPUT_DIR = '/workspace/.openboa/tool-output';

export async function limitOutput(text: string, limit: number, o: { sandbox: Sandbox; toolUseId: string; signal: AbortSignal }): Promise<string> {
  if (text.length <= limit) return text;
  const virtual = `${OUTPUT_DIR}/${o.toolUseId}.txt`;
  // Written through the sandbox like any file tool: a symlink the agent planted at .openboa cannot redirect it.
  const w = await o.sandbox.write(virtual, text, { signal: o.signal });
  const saved = isFailure(w) ? `the whole output (${text.length} characters) could not be saved: ${w.error}` : `the whole output (${text.length} characters) is in ${virtual}`;
  const part = Math.max(200, Math.floor((limit - 200) / 2));
  // Never between the halves of a surrogate pair: the result is logged and sent to the model as is.
  const head = cutHead(text, part);
  const tail = cutTail(text, part);
  return `${head}\n\n[... output truncated: ${saved}; read it with read or grep ...]\n\n${tail}`;
}
