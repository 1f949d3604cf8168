/**
 * An MCP tool result as the text the log and the model get. Text content is
 * kept as is; what text cannot carry (images, audio, binary resources) is
 * named with its type and size, never inlined as base64; a result with only
 * structured content gets its JSON. The caller redacts and bounds the text
 * (the environment's output limit, tools/output-limit.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cutHead } from '../foundation/text-cut.js';

/** Characters held while converting (the output limit applies after): a server cannot make us hold more. */
export const MAX_RESULT_CHARS = 4 * 1024 * 1024;

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Math.floor((data.replace(/=+$/, '').length * 3) / 4) : 0;
}

function part(c: CallToolResult['content'][number]): string {
  switch (c.type) {
    case 'text':
      return c.text;
    case 'image':
    case 'audio':
      return `[${c.type} ${c.mimeType}, ${base64Bytes(c.data)} bytes: not shown (tool results reach the model as text)]`;
    case 'resource': {
      const r = c.resource as { uri: string; mimeType?: string; text?: unknown; blob?: unknown };
      if (typeof r.text === 'string') return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, ${base64Bytes(r.blob)} bytes of binary data: not shown]`;
    }
    case 'resource_link':
      return `[resource link ${c.uri}${c.name ? ` (${c.name})` : ''}${c.description ? `: ${c.description}` : ''}]`;
    default:
      return `[content of type ${JSON.stringify((c as { type?: unknown }).type)}: not shown]`;
  }
}

/** The result's content as one text; "(no output)" when it has none. */
export function resultText(r: CallToolResult): string {
  const out: string[] = [];
  let size = 0;
  const content = Array.isArray(r.content) ? r.content : [];
  for (const c of content) {
    const t = part(c);
    out.push(t);
    size += t.length;
    if (size > MAX_RESULT_CHARS) {
      out.push(`[... the rest of the result (${content.length} parts in all) is left out: over ${MAX_RESULT_CHARS} characters ...]`);
      break;
    }
  }
  if (out.length === 0 && r.structuredContent !== undefined) out.push(JSON.stringify(r.structuredContent, null, 2));
  const text = out.join('\n\n');
  return text.length > MAX_RESULT_CHARS ? cutHead(text, MAX_RESULT_CHARS) : text || '(no output)';
}
