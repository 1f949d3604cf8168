/**
 * The model registry: which ModelProvider an agent's `provider` names. It is
 * a port (Deps.models): production uses the built-in one below; a test or an
 * embedding program passes its own (a provider with other retries, another
 * engine). A new engine is one more entry, not an edit of the run
 * (docs/providers.md).
 */
import type { Home } from '../foundation/home.js';
import type { LoadedAgent } from '../definitions/definitions.js';
import { loadScript } from '../definitions/definitions.js';
import { anthropicProvider } from './anthropic.js';
import { openaiProvider } from './openai.js';
import { scriptedProvider } from './scripted.js';
import type { ModelProvider } from './provider.js';

/** Makes the provider of one run. May throw (a bad script): the run records it as a definition that does not load. */
export type ModelFactory = (agent: LoadedAgent, home: Home, env: NodeJS.ProcessEnv) => ModelProvider;

export type ModelRegistry = Readonly<Record<string, ModelFactory>>;

export const builtinModels: ModelRegistry = {
  anthropic: (_agent, _home, env) => anthropicProvider({ env }),
  scripted: (agent, home) => scriptedProvider(loadScript(home, agent)),
  openai: (agent, _home, env) => openaiProvider({ env, baseURL: agent.def.base_url, apiKeyEnv: agent.def.api_key?.secret.env }),
};
