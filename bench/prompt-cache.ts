/**
 * The prompt cache over a long session: 50 turns of a scripted conversation
 * (a tool call every fifth turn), each a wake() against a scripted Messages
 * API that simulates Anthropic's prompt cache from the requests it is sent:
 * a cache entry is written at every breakpoint (`cache_control`), and a
 * request reads the longest prefix, ending at a block boundary at most 20
 * blocks before one of its breakpoints, that an earlier request wrote. The
 * share of input tokens read from the cache is what a real session would be
 * billed at the cache-read rate.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
// The scripted Messages API of the tests: the same server, with usage computed by the simulation.
import { startFakeAnthropic, type RecordedRequest, type Step } from '../tests/helpers/fake-anthropic.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { Home } from '../src/core/foundation/home.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { sendMessage } from '../src/core/ops/session-ops.js';
import { createSession } from '../src/core/ops/create-session.js';
import { wake } from '../src/core/run/wake.js';
import { REPO } from '../tests/helpers/home.js';

/** Anthropic's cache, simulated on the serialised blocks of each request (4 characters a token). */
export class PromptCacheSim {
  private readonly written = new Set<string>();

  usage(body: RecordedRequest['body']) {
    const blocks: unknown[] = [];
    const marks: number[] = [];
    const add = (b: Record<string, unknown>, role?: string) => {
      if (b.cache_control) marks.push(blocks.length);
      const { cache_control: _c, ...rest } = b;
      blocks.push(role ? { role, ...rest } : rest);
    };
    for (const t of body.tools ?? []) add(t as unknown as Record<string, unknown>);
    for (const s of (Array.isArray(body.system) ? body.system : [{ type: 'text', text: body.system }]) as Array<Record<string, unknown>>) add(s);
    for (const m of body.messages) for (const [i, c] of (m.content as Array<Record<string, unknown>>).entries()) add(c, i === 0 ? m.role : undefined);
    const hash: string[] = [];
    const size: number[] = [];
    let h = '';
    let n = 0;
    for (const b of blocks) {
      const text = JSON.stringify(b);
      h = crypto.createHash('sha1').update(h).update(text).digest('hex');
      n += text.length;
      hash.push(h);
      size.push(n);
    }
    let read = -1;
    for (const m of marks) for (let i = m; i >= Math.max(0, m - 20); i--) if (this.written.has(hash[i] as string)) read = Math.max(read, i);
    for (const m of marks) this.written.add(hash[m] as string);
    const last = marks.length ? (marks[marks.length - 1] as number) : -1;
    const tok = (chars: number) => Math.ceil(chars / 4);
    const readChars = read >= 0 ? (size[read] as number) : 0;
    const writtenChars = last >= 0 ? (size[last] as number) - readChars : 0;
    const restChars = n - readChars - Math.max(0, writtenChars);
    return { cache_read_input_tokens: tok(readChars), cache_creation_input_tokens: tok(Math.max(0, writtenChars)), input_tokens: tok(restChars) };
  }
}

export async function benchPromptCache(turns = 50) {
  const steps: Step[] = [];
  for (let k = 1; k <= turns; k++) {
    if (k % 5 === 0) steps.push({ toolUses: [{ id: `toolu_${k}`, name: 'bash', input: { command: `echo turn ${k}` } }] });
    steps.push({ text: `Answer ${k}: ${'a thoughtful reply '.repeat(20)}` });
  }
  const sim = new PromptCacheSim();
  const fake = await startFakeAnthropic(steps, { usageFor: (body) => sim.usage(body) });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-cache-'));
  try {
    fs.cpSync(path.join(REPO, 'environments', 'local.yaml'), path.join(root, 'environments', 'local.yaml'));
    fs.mkdirSync(path.join(root, 'agents', 'cache'), { recursive: true });
    fs.writeFileSync(path.join(root, 'agents', 'cache', 'agent.yaml'), YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: `You are a careful assistant. ${'Guidance. '.repeat(200)}`, environment: 'local' }));
    const home = new Home(root);
    const deps = systemDeps({ ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: fake.url });
    const store = new SessionStore(home, deps);
    const rt = { home, store, deps };
    const id = createSession(store, { agent: 'cache' }).id;
    for (let k = 1; k <= turns; k++) {
      sendMessage(store, id, `Message ${k}: ${'some context for the question '.repeat(10)}`);
      await wake(rt, id);
    }
    const events = store.readEvents(id).lines.flatMap((l) => (l.kind === 'event' && l.event.type === 'span.model_request_end' ? [l.event] : []));
    const after = events.slice(1);
    const sum = (k: 'input_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens') => after.reduce((a, e) => a + e.model_usage[k], 0);
    const all = sum('input_tokens') + sum('cache_read_input_tokens') + sum('cache_creation_input_tokens');
    const shares = after.map((e) => e.cache_read_share ?? 0);
    return {
      bench: 'prompt-cache',
      turns,
      model_requests: events.length,
      requests_seen: fake.requests.length,
      cache_read_share_from_second_request: {
        overall: Math.round((sum('cache_read_input_tokens') / all) * 1000) / 1000,
        min: Math.min(...shares),
        median: shares.slice().sort((a, b) => a - b)[Math.floor(shares.length / 2)],
        target: '>= 0.90',
      },
    };
  } finally {
    await fake.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
