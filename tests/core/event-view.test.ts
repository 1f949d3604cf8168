/** The one-line description `openboa events` shows for each event. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeEvent } from '../../src/core/views/event-view.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

const base = { id: 'sevt_x', created_at: '2026-11-27T10:00:00.000Z' };

test('context warnings and the delegation events have a line of their own, not a blank one', () => {
  const cases: Array<[SessionEvent, RegExp]> = [
    [{ ...base, type: 'session.context_warning', threshold: 0.75, tokens: 150_000, window: 200_000 } as SessionEvent, /^75 % of the window: 150000 of 200000 tokens$/],
    [{ ...base, type: 'session.thread_created', session_thread_id: 'child-1', agent_name: 'researcher', workflow_run_id: null, depth: 1, title: 'vendor A' } as SessionEvent, /^child child-1 \(researcher\) "vendor A", depth 1$/],
    [{ ...base, type: 'agent.thread_message_sent', to_session_thread_id: 'child-1', to_agent_name: 'researcher', content: [{ type: 'text', text: 'look at A' }] } as SessionEvent, /^to child-1 \(researcher\): look at A$/],
    [{ ...base, type: 'agent.thread_message_received', from_session_thread_id: 'child-1', from_agent_name: 'researcher', content: [{ type: 'text', text: 'A is cheaper' }], delivery_key: 'run:wrun_1' } as SessionEvent, /^from child-1 \(researcher\): A is cheaper$/],
    [{ ...base, type: 'agent.thinking', thinking: 'hmm, let me see' } as SessionEvent, /^hmm, let me see$/],
  ];
  for (const [e, want] of cases) assert.match(describeEvent(e), want, e.type);
});
