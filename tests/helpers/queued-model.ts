/**
 * A model port for in-process tests: answers each request with the next
 * reply of a list (a tool call, text, an error) and keeps every request it
 * was sent. It stands for the model's answers only; everything else in the
 * run is the real code.
 */
import type { ModelProvider, ModelRequest, ModelResponse, AssistantBlock } from '../../src/core/model/provider.js';
import { ModelError } from '../../src/core/model/provider.js';
import type { ModelRegistry } from '../../src/core/model/registry.js';

export type Reply = { text?: string; tools?: Array<{ name: string; input: Record<string, unknown> }>; error?: ModelError; usage?: Partial<ModelResponse['usage']> };

export interface QueuedModel extends ModelProvider {
  requests: ModelRequest[];
  /** A registry that answers every agent's `provider` with this model. */
  registry: ModelRegistry;
}

export function queuedModel(replies: Reply[], fallback = 'done'): QueuedModel {
  const requests: ModelRequest[] = [];
  const model: QueuedModel = {
    name: 'queued',
    requests,
    registry: { anthropic: () => model, scripted: () => model },
    async complete(req, signal) {
      requests.push(structuredClone(req));
      if (signal.aborted) throw new ModelError({ message: 'aborted', errorType: 'unknown_error', code: 'aborted', retryable: false, aborted: true });
      const r = replies.shift() ?? { text: fallback };
      if (r.error) throw r.error;
      const content: AssistantBlock[] = [];
      if (r.text) content.push({ type: 'text', text: r.text });
      (r.tools ?? []).forEach((c, k) => content.push({ type: 'tool_use', id: `toolu_q_${requests.length}_${k}`, name: c.name, input: c.input }));
      return {
        content,
        stop_reason: r.tools?.length ? 'tool_use' : 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...r.usage },
      };
    },
  };
  return model;
}
