/**
 * The `fetch` a Streamable HTTP MCP connection uses: every response body
 * passes through a byte count, so a hostile or broken server cannot grow
 * the daemon's memory without bound (the SDK buffers a JSON body whole and
 * an SSE line until its end, and its standalone GET stream has no size cap).
 *
 *  - MAX_HTTP_MESSAGE_BYTES: one message, counted as the bytes since the
 *    last line feed (an SSE event's data line, or a JSON body, which has
 *    none to speak of);
 *  - MAX_HTTP_TOTAL_BYTES: everything one connection receives in its run,
 *    across all its responses and reconnections.
 *
 * Past either, the body errors (which cancels the response, closing the
 * socket) and `onExceeded` is told why, once: the connection then treats
 * the server as gone (mcp-connection.ts).
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export const MAX_HTTP_MESSAGE_BYTES = 16 * 1024 * 1024;
export const MAX_HTTP_TOTAL_BYTES = 64 * 1024 * 1024;

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function boundedFetch(o: { onExceeded: (why: string) => void; maxMessageBytes?: number; maxTotalBytes?: number; fetch?: FetchLike }): FetchLike {
  const maxMessage = o.maxMessageBytes ?? MAX_HTTP_MESSAGE_BYTES;
  const maxTotal = o.maxTotalBytes ?? MAX_HTTP_TOTAL_BYTES;
  const inner = o.fetch ?? fetch;
  let total = 0;
  let over: string | null = null;
  const exceeded = (why: string) => {
    if (over === null) (over = why), o.onExceeded(why);
    return new Error(why);
  };
  return async (url, init) => {
    if (over !== null) throw new Error(over);
    const res = await inner(url, init);
    if (!res.body || NULL_BODY.has(res.status)) return res;
    let line = 0;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          total += chunk.byteLength;
          const first = chunk.indexOf(10);
          const last = chunk.lastIndexOf(10);
          // Lines wholly inside one chunk are shorter than the chunk (the network's, tens of KB), far under the bound.
          const longest = first < 0 ? line + chunk.byteLength : line + first;
          line = last < 0 ? line + chunk.byteLength : chunk.byteLength - last - 1;
          if (longest > maxMessage || line > maxMessage) ctl.error(exceeded(`the server sent a message over ${maxMessage} bytes`));
          else if (total > maxTotal) ctl.error(exceeded(`the server sent over ${maxTotal} bytes in this run`));
          else ctl.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
