/**
 * What an environment lets out (docs/sandbox.md, "Network"): the posture
 * (`network: none | host | limited`) and the allow list of `limited`.
 * Also the one line of runtime/egress.jsonl a connection becomes.
 */
import * as z from 'zod';

export const NetworkPosture = z.enum(['none', 'host', 'limited']);
export type NetworkPosture = z.infer<typeof NetworkPosture>;

/**
 * One entry of `allowed_hosts`: a name (`api.example.com`), a wildcard of
 * its subdomains (`*.example.com`: any depth, not the apex itself), an IPv4
 * literal or a bracketed IPv6 literal, each with an optional `:port`.
 * Without a port an entry allows 80 and 443 only. Names are ASCII (an IDN
 * in its xn-- form), matched without case and without a trailing dot.
 */
export const ALLOWED_HOST = /^(?:(?:\*\.)?(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export const AllowedHost = z
  .string()
  .regex(ALLOWED_HOST, 'expected host, *.domain or [ipv6], with an optional :port (e.g. "api.example.com", "*.example.com:8443")')
  .refine((h) => {
    const port = /:(\d{1,5})$/.exec(h)?.[1];
    return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
  }, 'expected a port from 1 to 65535');

/** runtime/egress.jsonl: one line per connection the proxy or web_fetch took or refused. */
export const EgressLine = z.strictObject({
  at: z.string(),
  /** Who asked: the sandbox through the proxy (connect: a tunnel; http: one plain request) or the web_fetch tool. */
  via: z.enum(['connect', 'http', 'web_fetch']),
  host: z.string(),
  port: z.number().int(),
  /** The address connected to (after the checks), when one was. */
  address: z.string().nullable(),
  allowed: z.boolean(),
  /** Why it was refused, or why it ended early. */
  reason: z.string().nullable(),
  bytes_out: z.number().int().nonnegative(),
  bytes_in: z.number().int().nonnegative(),
});
export type EgressLine = z.infer<typeof EgressLine>;
