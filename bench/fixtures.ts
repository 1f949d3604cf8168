/**
 * Homes for benchmarks: a scripted zero-latency agent, and many sessions
 * made quickly (one session through the real store, then copies of its
 * files with fresh ids and matching session.json cursors).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Home } from '../src/core/foundation/home.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { uuidv7 } from '../src/core/foundation/ids.js';

export interface BenchHome {
  root: string;
  home: Home;
  store: SessionStore;
  cleanup(): void;
}

/** A temp home with the repository's environments and a `fast` scripted agent that answers with text at once. */
export function benchHome(): BenchHome {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-'));
  const repo = path.resolve(import.meta.dirname, '..');
  fs.cpSync(path.join(repo, 'environments'), path.join(root, 'environments'), { recursive: true });
  fs.mkdirSync(path.join(root, 'agents', 'fast'), { recursive: true });
  fs.writeFileSync(path.join(root, 'agents', 'fast', 'agent.yaml'), 'provider: scripted\nmodel: none\nscript: script.yaml\n');
  fs.writeFileSync(path.join(root, 'agents', 'fast', 'script.yaml'), 'turns:\n  - text: ok\nfallback: ok\n');
  fs.mkdirSync(path.join(root, 'sessions'));
  const home = new Home(root);
  return { root, home, store: new SessionStore(home, systemDeps()), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Makes `n` idle sessions of agent `fast`, fast: copies of one real session. Returns their ids. */
export function manySessions(b: BenchHome, n: number): string[] {
  if (n === 0) return [];
  const first = b.store.create({ agentId: 'fast', environmentId: 'local' });
  const tp = b.store.paths(first.id);
  const events = fs.readFileSync(tp.events, 'utf8');
  const snapshot = JSON.parse(fs.readFileSync(tp.snapshot, 'utf8'));
  const ids = [first.id];
  for (let i = 1; i < n; i++) {
    const id = uuidv7();
    const p = b.store.paths(id);
    fs.mkdirSync(p.workspace, { recursive: true });
    fs.mkdirSync(p.runtime);
    fs.writeFileSync(p.events, events);
    fs.writeFileSync(p.wakeQueue, '');
    const snap = structuredClone(snapshot);
    snap.id = id;
    snap.journals.events.ino = fs.statSync(p.events).ino;
    snap.journals.wake_queue.ino = fs.statSync(p.wakeQueue).ino;
    fs.writeFileSync(p.snapshot, JSON.stringify(snap));
    ids.push(id);
  }
  return ids;
}

/**
 * The lines of a long-lived conversation: each turn is a message, the run
 * that takes it in, a model call with a tool round trip, a reply and the idle
 * record (10 lines). Returns `count` lines. `prove` gives each run's proof
 * (the session's run key: SessionStore.runKey and runProof), as the runtime
 * stamps it.
 */
export function conversationLines(count: number, prove: (runId: string) => string): string[] {
  const ts = new Date().toISOString();
  const usage = { input_tokens: 900, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const out: string[] = [];
  for (let k = 1; out.length < count; k++) {
    // Run ids as the runtime mints them (newer than the last), so the log accepts the runs.
    const wake = `wrun_${(k + 1).toString(16).padStart(32, '0')}`;
    const turn = [
      { id: `sevt_u${k}`, type: 'user.message', created_at: ts, content: [{ type: 'text', text: `message ${k}: please look at the notes and tell me what changed since yesterday` }] },
      { id: `sevt_r${k}`, type: 'session.status_running', created_at: ts, wake_id: wake, trigger: 'event', processed_event_ids: [`sevt_u${k}`], proof: prove(wake) },
      { id: `sevt_s${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_t${k}`, type: 'agent.tool_use', created_at: ts, wake_id: wake, name: 'read', input: { file_path: '/workspace/notes.md' }, model_tool_use_id: `toolu_${k}`, evaluated_permission: 'allow' },
      { id: `sevt_e${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_s${k}`, is_error: false, model_usage: usage },
      { id: `sevt_o${k}`, type: 'agent.tool_result', created_at: ts, wake_id: wake, tool_use_id: `sevt_t${k}`, content: [{ type: 'text', text: '1\t# Notes\n2\t- nothing new' }], is_error: false },
      { id: `sevt_S${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_m${k}`, type: 'agent.message', created_at: ts, wake_id: wake, content: [{ type: 'text', text: 'Nothing changed since yesterday.' }] },
      { id: `sevt_E${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_S${k}`, is_error: false, model_usage: usage },
      { id: `sevt_i${k}`, type: 'session.status_idle', created_at: ts, wake_id: wake, stop_reason: { type: 'end_turn' }, stop_details: null },
    ];
    for (const e of turn) if (out.length < count) out.push(JSON.stringify(e));
  }
  return out;
}
