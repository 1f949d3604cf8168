// One logged event, for a person: messages as text, tool calls and results
// and thinking folded (<details>), errors red, outcome evaluations with their
// explanation, a compaction marked. Every string is a text child.
import { html } from './api.js';
import { when } from './format.js';

const text = (blocks) => (Array.isArray(blocks) ? blocks : typeof blocks === 'string' ? [{ type: 'text', text: blocks }] : []).map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
const json = (v) => JSON.stringify(v, null, 2);

function Folded({ summary, body, open }) {
  return html`<details open=${open}><summary>${summary}</summary><pre>${body}</pre></details>`;
}

function body(e) {
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
      return html`<div class="text">${text(e.content)}</div>`;
    case 'agent.thread_message_received':
      return html`<div class="text">${text(e.content)}</div>`;
    case 'agent.thinking':
      return html`<${Folded} summary="thinking" body=${e.thinking ?? (e.redacted_data ? '(redacted by the model)' : '')} />`;
    case 'agent.tool_use':
    case 'agent.mcp_tool_use':
    case 'agent.custom_tool_use':
      return html`<${Folded} summary=${`${e.name}${e.mcp_server_name ? ` (${e.mcp_server_name})` : ''} · input`} body=${json(e.input)} />`;
    case 'agent.tool_result':
    case 'agent.mcp_tool_result':
      return html`<${Folded} summary=${`result${e.is_error ? ' (error)' : ''} of ${e.tool_use_id ?? e.mcp_tool_use_id}`} body=${text(e.content)} />`;
    case 'user.tool_confirmation':
      return html`<div>${e.result === 'allow' ? 'allowed' : 'denied'} ${e.tool_use_id}${e.deny_message ? `: ${e.deny_message}` : ''}</div>`;
    case 'user.custom_tool_result':
      return html`<${Folded} summary=${`result for ${e.custom_tool_use_id}${e.is_error ? ' (error)' : ''}`} body=${text(e.content)} open=${true} />`;
    case 'user.define_outcome':
      return html`<div class="text">${e.description}</div>`;
    case 'user.interrupt':
      return html`<div>${e.reason ?? ''}</div>`;
    case 'session.error':
      return html`<div class="text">${e.error?.code ? `${e.error.code}: ` : ''}${e.error?.message ?? ''}</div>`;
    case 'session.status_idle':
      return html`<div class="muted">${e.stop_reason?.type ?? ''}${e.stop_reason?.event_ids ? ` (${e.stop_reason.event_ids.join(', ')})` : ''}</div>`;
    case 'span.outcome_evaluation_end':
      return html`<div><strong>${e.result}</strong> (iteration ${e.iteration})</div><div class="text">${e.explanation}</div>`;
    case 'agent.thread_context_compacted':
      return html`<${Folded} summary="the context was compacted here" body=${json(e)} />`;
    case 'span.model_request_end':
      return html`<div class="muted">${e.model_usage?.input_tokens ?? 0} in · ${e.model_usage?.output_tokens ?? 0} out${e.cost_usd != null ? ` · $${e.cost_usd.toFixed(4)}` : ''}</div>`;
    default:
      return html`<${Folded} summary="details" body=${json(e)} />`;
  }
}

const kind = (t) =>
  t === 'session.error' || t.endsWith('_error') ? 'ev-error'
  : t === 'agent.thread_context_compacted' ? 'ev-compaction'
  : t.startsWith('user.') ? 'ev-user'
  : t === 'agent.message' ? 'ev-agent'
  : t.startsWith('span.outcome') ? 'ev-outcome'
  : t.startsWith('span.') || t.startsWith('session.status') ? 'ev-quiet'
  : 'ev-other';

export function EventItem({ e }) {
  const err = (e.type === 'agent.tool_result' || e.type === 'agent.mcp_tool_result') && e.is_error;
  return html`<li class=${`ev ${kind(e.type)}${err ? ' ev-error' : ''}`} data-type=${e.type} data-id=${e.id}>
    <div class="ev-head"><span class="ev-type">${e.type}</span><time datetime=${e.created_at}>${when(e.created_at)}</time></div>
    ${body(e)}
  </li>`;
}
