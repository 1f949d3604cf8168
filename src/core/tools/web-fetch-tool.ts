/**
 * web_fetch (Managed Agents' name and input, `{url}`): the daemon fetches a
 * URL for the agent under the environment's network rules
 * (egress/web-fetch.ts) and returns the final URL, the status and the page
 * as readable text (HTML as Markdown). A refused destination, a redirect to
 * one, a timeout or a network error is an error result saying which.
 */
import { WebFetchInput } from '../schema/index.js';
import { webFetch } from '../egress/web-fetch.js';
import { fail, ok, type Tool } from './tool.js';

export const webFetchTool: Tool<typeof WebFetchInput> = {
  name: 'web_fetch',
  description:
    "Fetch a URL (http or https) and return its final URL, status and content as text (HTML converted to Markdown). Only hosts the environment's network allows are reached; redirects are followed only to allowed hosts.",
  input: WebFetchInput,
  async run(input, ctx) {
    if (!ctx.egress) return fail('web_fetch is not available in this run (no network rules were given to it)');
    const r = await webFetch(input.url, ctx.egress, { clock: ctx.clock, signal: ctx.signal });
    if (!r.ok) return fail(`web_fetch: ${r.error}`);
    const head = [`URL: ${r.finalUrl}`, ...(r.finalUrl !== r.url ? [`(redirected from ${r.url})`] : []), `Status: ${r.status}${r.statusText ? ` ${r.statusText}` : ''}`, `Content-Type: ${r.contentType || '(none)'}`];
    if (r.truncated) head.push(`(only the first ${r.bytes} bytes were read)`);
    const text = `${head.join('\n')}\n\n${r.text}`;
    return r.status >= 400 ? fail(text) : ok(text);
  },
};
