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
