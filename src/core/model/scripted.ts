/**
 * The scripted provider: answers from the agent's script.yaml instead of a
 * model, for offline demos and deterministic examples. The N-th model
 * request of a session (N = assistant turns already in the conversation)
 * gets turns[N]; after the last turn, the fallback text. Tool calls in a turn
 * are real calls: the harness runs them like any model's. A rubric
 * grader's request is answered from `grades` by the evaluation's number.
 * It does not stream: a delta sink hears each text block whole.
 */
import type { Script } from '../schema/index.js';
import type { AssistantBlock, DeltaSink, ModelProvider, ModelRequest, ModelResponse } from './provider.js';
import { ModelError } from './provider.js';

export function scriptedProvider(script: Script): ModelProvider {
  return {
    name: 'scripted',
    async complete(req: ModelRequest, signal: AbortSignal, onDelta?: DeltaSink): Promise<ModelResponse> {
      if (signal.aborted) throw new ModelError({ message: 'the model call was aborted', errorType: 'unknown_error', code: 'aborted', retryable: false, aborted: true });
      if (req.grading && req.tool_choice) {
        // A grader's request: the scripted grade for this evaluation, through the tool it is forced to call.
        const g = script.grades[Math.min(req.grading.iteration, script.grades.length - 1)] ?? { result: 'satisfied', explanation: 'the script has no grades; satisfied' };
        return { content: [{ type: 'tool_use', id: `toolu_grade_${req.grading.iteration}`, name: req.tool_choice.name, input: { ...g } }], stop_reason: 'tool_use', usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
      }
      const n = req.messages.filter((m) => m.role === 'assistant').length;
      const turn = script.turns[n];
      const content: AssistantBlock[] = [];
      if (!turn) {
        content.push({ type: 'text', text: script.fallback });
      } else {
        if (turn.text) content.push({ type: 'text', text: turn.text });
        turn.tool_calls.forEach((c, k) => content.push({ type: 'tool_use', id: `toolu_script_${n}_${k}`, name: c.name, input: c.input }));
      }
      // Nothing streams here: each text block is told whole, once.
      content.forEach((b, index) => b.type === 'text' && onDelta?.({ kind: 'text', index, text: b.text }));
      const usesTools = content.some((b) => b.type === 'tool_use');
      return {
        content,
        stop_reason: usesTools ? 'tool_use' : 'end_turn',
        // A script spends no tokens; SPEC §4: all four numbers, 0 when unknown.
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
    },
  };
}
