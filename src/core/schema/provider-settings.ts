/**
 * The agent.yaml fields of a model provider that talks to an HTTP endpoint
 * of the operator's choosing (docs/providers.md). Only `provider: openai`
 * uses them; set for another provider they are an error naming the field,
 * so a setting that would be silently ignored is not.
 *
 *  - `base_url`: the OpenAI-compatible API's base, e.g.
 *    `http://127.0.0.1:8000/v1` (vLLM); default OPENAI_BASE_URL from the
 *    daemon's environment, else https://api.openai.com/v1.
 *  - `api_key`: a secret reference, `{secret: {env: NAME}}`; default
 *    OPENAI_API_KEY from the daemon's environment. Never the key itself.
 */
import * as z from 'zod';
import { SecretRef } from './secret-ref.js';

/** Providers that read `base_url` and `api_key`. */
export const ENDPOINT_PROVIDERS: readonly string[] = ['openai'];

const HTTP_URL = 'expected an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1';

export const BaseUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}, `${HTTP_URL} (without credentials in it: use api_key)`);

/** The fields these settings add to AgentDefinition (schema/definitions.ts). */
export const ProviderSettingsFields = {
  base_url: BaseUrl.optional(),
  api_key: SecretRef.optional(),
};

/** Issues for endpoint fields set on a provider that does not use them. */
export function providerSettingsIssues(a: { provider: string; base_url?: unknown; api_key?: unknown }): Array<{ path: string[]; message: string }> {
  if (ENDPOINT_PROVIDERS.includes(a.provider)) return [];
  const out: Array<{ path: string[]; message: string }> = [];
  for (const field of ['base_url', 'api_key'] as const) {
    if (a[field] !== undefined) out.push({ path: [field], message: `${field} is used only by provider ${ENDPOINT_PROVIDERS.join(', ')}; this agent's provider is ${a.provider}` });
  }
  return out;
}
