/**
 * `<home>/.openboa/api.json`: where the home's HTTP API listens, written by
 * the server when it starts listening and removed when it stops, so a run
 * can tell its sandbox where to reach it (run/api-access.ts).
 */
import * as z from 'zod';

export const ApiEndpoint = z.object({
  /** The base URL a client passes to the SDK, e.g. http://127.0.0.1:7410. */
  url: z.string().url(),
  /** The server's process: a record whose process is gone is stale. */
  pid: z.number().int().positive(),
});
export type ApiEndpoint = z.infer<typeof ApiEndpoint>;
