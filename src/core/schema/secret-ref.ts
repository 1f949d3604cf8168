/**
 * A value in a definition that may be a secret reference: `{secret: {env:
 * NAME}}` is read from the daemon's own environment when a run starts and
 * its value feeds the run's Redactor (environment `env`, MCP servers' `env`
 * and `headers`). Exported through definitions.ts.
 */
import * as z from 'zod';

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const SecretRef = z.strictObject({
  secret: z.strictObject({ env: z.string().regex(ENV_NAME, 'expected an environment variable name') }),
});
export type SecretRef = z.infer<typeof SecretRef>;

export const EnvValue = z.union([z.string(), SecretRef]);
export type EnvValue = z.infer<typeof EnvValue>;
