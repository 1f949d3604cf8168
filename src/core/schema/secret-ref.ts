/**
 * A reference to a secret held in the daemon's environment:
 * `{secret: {env: NAME}}`. The value is read when a run starts, never written
 * to a definition, and every value read feeds the run's Redactor (redact.ts).
 * Used by environments' `env`, agent.yaml `api_key`, and MCP servers' `env`
 * and `headers`. Exported through definitions.ts.
 */
import * as z from 'zod';

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const SecretRef = z.strictObject({
  secret: z.strictObject({ env: z.string().regex(ENV_NAME, 'expected an environment variable name') }),
});
export type SecretRef = z.infer<typeof SecretRef>;

export const EnvValue = z.union([z.string(), SecretRef]);
export type EnvValue = z.infer<typeof EnvValue>;
