/**
 * Tools from MCP servers (docs/mcp.md): a call is filed as agent.mcp_tool_use
 * (its server and tool apart) and confirmed like a built-in tool's; the
 * model called it by its prefixed name (mcp__<server>__<tool>).
 */
import { mcpToolName } from '../schema/index.js';
import { capability } from './event-kind.js';

export const mcp = capability({
  name: 'mcp',
  kinds: {
    'agent.mcp_tool_use': {
      // Seen by the policy under the name the model called it (mcp__<server>__<tool>).
      asToolUse: (e) => ({ id: e.id, type: 'agent.tool_use', created_at: e.created_at, ...(e.wake_id ? { wake_id: e.wake_id } : {}), name: mcpToolName(e.mcp_server_name, e.name), input: e.input, model_tool_use_id: e.model_tool_use_id, evaluated_permission: e.evaluated_permission }),
      fold: {
        apply(s, e, { line }) {
          s.open_tool_uses.push({ id: e.id, name: mcpToolName(e.mcp_server_name, e.name), kind: 'tool', permission: e.evaluated_permission, line, wake_id: e.wake_id ?? null, answered_by: null, mcp_server_name: e.mcp_server_name });
        },
      },
      conversation: { enter: (sink, e) => sink.toolUse(e.id, e.model_tool_use_id, mcpToolName(e.mcp_server_name, e.name), e.input), carriesContent: true },
    },
    'agent.mcp_tool_result': {
      fold: {
        apply(s, e) {
          s.open_tool_uses = s.open_tool_uses.filter((u) => u.id !== e.mcp_tool_use_id);
        },
      },
      conversation: { enter: (sink, e, line) => sink.toolResult(line, e, e.mcp_tool_use_id, e.content, e.is_error), answers: (e) => e.mcp_tool_use_id, carriesContent: true },
    },
  },
});
