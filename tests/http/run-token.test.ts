/**
 * Run-scoped tokens (docs/http.md, "Run tokens"): a run's sandbox gets
 * OPENBOA_API_URL and OPENBOA_RUN_TOKEN when a server listens and the
 * environment reaches it; the token opens its own session and that
 * session's children, only while its run holds the lease; never another
 * session, never after the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { iso } from '../../src/core/foundation/clock.js';
import { mintRunToken, verifyRunToken } from '../../src/core/run/run-token.js';
import { apiAccess } from '../../src/core/run/api-access.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { apiBench, KEY } from './api-bench.js';
import { PING_MS } from '../../src/http/stream-hub.js';

const RUN = 'wrun_0000000000000000000000000000abcd';

test('a run token opens its session and its children while the run holds the lease; not another session; not after', async (t) => {
  const b = await apiBench(t);
  const mine = b.session();
  const child = createSession(b.store, { agent: 'test', parentSessionId: mine }).id;
  const other = b.session('not yours');
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: RUN });
  const agent = b.clientWith(token);

  // No lease held by that run: the token is worth nothing.
  await assert.rejects(agent.beta.sessions.retrieve(mine), (e: { status?: number }) => e.status === 401);

  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  assert.equal((await agent.beta.sessions.retrieve(mine)).id, mine);
  assert.equal((await agent.beta.sessions.retrieve(child)).id, child);
  await agent.beta.sessions.events.send(child, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'from the parent run' }] }] });
  assert.equal(b.events(child).filter((e) => e.type === 'user.message').length, 1);
  // Another session is answered as if it did not exist; a listing shows only its own tree.
  await assert.rejects(agent.beta.sessions.retrieve(other), (e: { status?: number }) => e.status === 404);
  await assert.rejects(agent.beta.sessions.events.list(other), (e: { status?: number }) => e.status === 404);
  await assert.rejects(agent.beta.sessions.events.send(other, { events: [{ type: 'user.interrupt' }] }), (e: { status?: number }) => e.status === 404);
  // A listing shows its own session (and the children its log records: spawned ones), never another.
  const listed = (await agent.beta.sessions.list({ order: 'asc' })).data.map((s) => s.id);
  assert.equal(listed[0], mine);
  assert.equal(listed.includes(other), false);
  b.store.appendEvents(mine, [{ type: 'session.status_running', wake_id: RUN, trigger: 'manual', processed_event_ids: [] }], { wakeId: RUN });
  // A run creates no session of its own: only a child of its delegates (this agent has none), as spawn_session would.
  await assert.rejects(agent.beta.sessions.create({ agent: 'test', environment_id: 'local', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }] }), (e: { status?: number }) => e.status === 403);
  // Agents and environments are the key's alone: a run cannot rewrite its own definition (its permissions, its prompt).
  await assert.rejects(agent.beta.agents.list(), (e: { status?: number }) => e.status === 403);
  await assert.rejects(agent.beta.agents.update('test', { version: 1, system: 'obey me' } as never), (e: { status?: number }) => e.status === 403);
  await assert.rejects(agent.beta.environments.list(), (e: { status?: number }) => e.status === 403);

  // Altered tokens are refused: another session in the payload, or a mac that is not the home's.
  const [, payload, mac] = token.split('.');
  const forged = `obrt.${Buffer.from(JSON.stringify({ a: 'test', s: other, r: RUN })).toString('base64url')}.${mac}`;
  assert.equal(verifyRunToken(b.h.home, forged), null);
  await assert.rejects(b.clientWith(forged).beta.sessions.retrieve(other), (e: { status?: number }) => e.status === 401);
  assert.equal(verifyRunToken(b.h.home, `obrt.${payload}.${'A'.repeat(mac!.length)}`), null);

  // The run ends (its lease goes): the same token is refused.
  await lease.release();
  await assert.rejects(agent.beta.sessions.retrieve(mine), (e: { status?: number }) => e.status === 401);
  // Another run of the same session does not make it good again.
  const next = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: 'wrun_0000000000000000000000000000abce', nowIso: iso(b.deps.clock.now()) });
  t.after(() => next.release());
  await assert.rejects(agent.beta.sessions.retrieve(mine), (e: { status?: number }) => e.status === 401);
});

test("the run's service: with a server listening and network: host, the sandbox gets the URL and a token the redactor knows; with network: none, nothing", async (t) => {
  const b = await apiBench(t);
  const svc = apiAccess();
  const agent = { id: 'test' } as Parameters<NonNullable<typeof svc.secrets>>[1];
  const secrets = svc.secrets!(b.rt, agent, { sessionId: 'S', runId: RUN });
  const token = secrets.OPENBOA_RUN_TOKEN!;
  assert.deepEqual(verifyRunToken(b.h.home, token), { agentId: 'test', sessionId: 'S', runId: RUN });
  const setup = (network: string) => ({ rt: b.rt, agent, sessionId: 'S', runId: RUN, env: { network } }) as unknown as Parameters<NonNullable<typeof svc.sandboxEnv>>[0];
  assert.deepEqual(svc.sandboxEnv!(setup('host')), { OPENBOA_API_URL: b.server.url, OPENBOA_RUN_TOKEN: token });
  assert.deepEqual(svc.sandboxEnv!(setup('none')), {});
  // No server for this home: no token at all.
  await b.server.close();
  const none = apiAccess();
  assert.deepEqual(none.secrets!(b.rt, agent, { sessionId: 'S', runId: RUN }), {});
  assert.deepEqual(none.sandboxEnv!(setup('host')), {});
});

test('a real run on a network: host environment sees OPENBOA_API_URL and a token that works while it runs', { skip: false }, async (t) => {
  const b = await apiBench(t, {
    agent: { environment: 'hostnet' },
    steps: [{ toolUses: [{ id: 'toolu_env', name: 'bash', input: { command: 'echo "url=$OPENBOA_API_URL"; curl -s -o /dev/null -w "code=%{http_code}" -H "Authorization: Bearer $OPENBOA_RUN_TOKEN" "$OPENBOA_API_URL/v1/sessions/$OPENBOA_SESSION_ID" || echo no-curl' } }] }, { text: 'done' }],
  });
  b.h.write('environments/hostnet.yaml', 'network: host\n');
  const id = b.session('check the api');
  const r = await b.wake(id);
  assert.equal(r.status, 'idle');
  const result = b.events(id).find((e) => e.type === 'agent.tool_result');
  const text = JSON.stringify(result);
  assert.match(text, new RegExp(`url=${b.server.url.replace(/[.]/g, '\\.')}`));
  if (!text.includes('no-curl')) assert.match(text, /code=200/);
  // The token is the run's secret: it is not in the log.
  assert.equal(/obrt\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/.test(JSON.stringify(b.events(id))), false);
});

test("a run token's stream ends when its run ends; one opened after the run ended ends at once", { timeout: 30_000 }, async (t) => {
  const b = await apiBench(t);
  const mine = b.session();
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: RUN });
  const agent = b.clientWith(token);
  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  const stream = await agent.beta.sessions.events.stream(mine);
  // The key's stream of the same session goes on after the run.
  const keyStream = await b.client.beta.sessions.events.stream(mine);
  await b.server.api.hub.whenClients(2);
  b.store.appendEvents(mine, [{ type: 'agent.message', content: [{ type: 'text', text: 'working' }] }], { wakeId: RUN });
  b.store.appendEvents(mine, [{ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null }], { wakeId: RUN });
  const seen: string[] = [];
  for await (const e of stream) seen.push(e.type); // ends: without the end, this waits for ever (the test's timeout)
  assert.deepEqual(seen, ['agent.message', 'session.status_idle']);
  await b.server.api.hub.whenClients(1);
  const it = keyStream[Symbol.asyncIterator]();
  b.store.appendUserEvent(mine, { type: 'user.message', content: [{ type: 'text', text: 'still here' }] });
  const skip = new Set(['agent.message', 'session.status_idle']);
  let next = await it.next();
  while (!next.done && skip.has(next.value.type)) next = await it.next();
  assert.equal(!next.done && next.value.type, 'user.message', "the key's stream is not ended by the run's end");
  keyStream.controller.abort();

  // The lease is gone between the request's check and the stream's start: simulated by a check that says so.
  const body = b.server.api.hub.open(mine, (await import('../../src/core/foundation/redact.js')).Redactor.none, new AbortController().signal, { run: { runId: RUN, live: async () => false } });
  const text = await new Response(body).text();
  assert.equal(text, ': connected\n\n', 'ended at once');
});

test('a run token spawns a child of its own session through the delegation limits (the same operation as spawn_session); never a root session', async (t) => {
  const b = await apiBench(t);
  const agentYaml = (extra: string) => `provider: anthropic\nmodel: fake-model\nsystem: You are a test agent.\nenvironment: local\n${extra}`;
  b.h.write('agents/boss/agent.yaml', agentYaml('delegates: [worker]\nlimits:\n  max_children: 1\n'));
  b.h.write('agents/worker/agent.yaml', agentYaml(''));
  const boss = createSession(b.store, { agent: 'boss' }).id;
  const token = mintRunToken(b.h.home, { agentId: 'boss', sessionId: boss, runId: RUN });
  const agent = b.clientWith(token);
  const lease = await acquireLease(b.store.paths(boss), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  b.store.appendEvents(boss, [{ type: 'session.status_running', wake_id: RUN, trigger: 'manual', processed_event_ids: [] }], { wakeId: RUN });
  const task = [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: 'count the files' }] }];

  // Outside the roster: refused, and nothing is made.
  const before = b.store.listIds().length;
  await assert.rejects(agent.beta.sessions.create({ agent: 'test', initial_events: task } as never), (e: { status?: number; message?: string }) => e.status === 403 && /not one of your delegates/.test(String(e.message)));
  // No task: a 400 naming the field.
  await assert.rejects(agent.beta.sessions.create({ agent: 'worker' } as never), (e: { status?: number; message?: string }) => e.status === 400 && /initial_events/.test(String(e.message)));
  assert.equal(b.store.listIds().length, before);

  const child = await agent.beta.sessions.create({ agent: 'worker', title: 'files', initial_events: task } as never);
  const snap = b.store.snapshot(child.id);
  assert.equal(snap.parent_session_id, boss, "the child's parent is the token's session");
  assert.equal(snap.agent_id, 'worker');
  assert.equal(b.events(child.id).find((e) => e.type === 'user.message')?.type === 'user.message' && (b.events(child.id).find((e) => e.type === 'user.message') as { mandate_at?: string }).mandate_at !== undefined, true);
  // The parent's log records it as the run's own (the fold accepts it: the child is among its children).
  assert.ok(Object.hasOwn(b.store.snapshot(boss).children, child.id));
  assert.deepEqual(b.store.snapshot(boss).rejected, []);
  // The token may read its child.
  assert.equal((await agent.beta.sessions.retrieve(child.id)).id, child.id);

  // limits.max_children: 1, as spawn_session applies it: the second is refused and recorded.
  await assert.rejects(agent.beta.sessions.create({ agent: 'worker', initial_events: task } as never), (e: { status?: number; message?: string }) => e.status === 403 && /limit is 1 \(limits\.max_children\)/.test(String(e.message)));
  assert.equal(b.events(boss).filter((e) => e.type === 'session.spawn_refused').length, 1);

  // The run is over: the token spawns nothing.
  await lease.release();
  await assert.rejects(agent.beta.sessions.create({ agent: 'worker', initial_events: task } as never), (e: { status?: number }) => e.status === 401);
});

test("a run token cannot do a person's part to its child: answer what waits, resume, change or delete it", async (t) => {
  const b = await apiBench(t);
  const mine = b.session();
  const child = createSession(b.store, { agent: 'test', parentSessionId: mine }).id;
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: RUN });
  const agent = b.clientWith(token);
  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  const denied = (e: { status?: number }) => e.status === 403;
  const before = b.events(child).length;
  await assert.rejects(agent.beta.sessions.events.send(child, { events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_x', result: 'allow' }] } as never), denied);
  await assert.rejects(agent.beta.sessions.events.send(child, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_x', content: [{ type: 'text', text: 'done' }] }] } as never), denied);
  // A message and an interrupt in the same request as a confirmation: nothing of it is appended.
  await assert.rejects(agent.beta.sessions.events.send(child, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }, { type: 'user.tool_confirmation', tool_use_id: 'sevt_x', result: 'allow' }] } as never), denied);
  assert.equal(b.events(child).length, before, 'nothing appended');
  await assert.rejects(agent.beta.sessions.update(child, { title: 'mine now' }), denied);
  await assert.rejects(agent.beta.sessions.delete(child), denied);
  const resume = await fetch(`${b.server.url}/v1/sessions/${child}/resume`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  assert.equal(resume.status, 403);
  // What a run does reach its child with still works, and the key may do all of it.
  await agent.beta.sessions.events.send(child, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'from the parent run' }] }] });
  assert.equal((await b.client.beta.sessions.update(child, { title: 'a person names it' })).title, 'a person names it');
});

test("a run token's stream of its child ends at the next ping once the run no longer holds the lease", { timeout: 30_000 }, async (t) => {
  const b = await apiBench(t);
  const mine = b.session();
  const child = createSession(b.store, { agent: 'test', parentSessionId: mine }).id;
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: RUN });
  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  const stream = await b.clientWith(token).beta.sessions.events.stream(child);
  await b.server.api.hub.whenClients(1);
  await lease.release();
  await b.deps.clock.advance(PING_MS);
  await b.server.api.hub.whenClients(0);
  const seen: string[] = [];
  for await (const e of stream) seen.push(e.type); // ends: without the check at the ping, this waits for ever
  assert.deepEqual(seen, []);
});

test("a run token sees its own session's children and its children, not theirs: a child's overview has no children, its relations.json is not served", async (t) => {
  const b = await apiBench(t);
  const mine = b.session();
  const child = createSession(b.store, { agent: 'test', parentSessionId: mine }).id;
  const grandchild = createSession(b.store, { agent: 'test', parentSessionId: child }).id;
  // Both logs record their child, as a run's spawn does.
  const childRun = 'wrun_0000000000000000000000000000c0de';
  for (const [id, wake, kid] of [[mine, RUN, child], [child, childRun, grandchild]] as const) {
    b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: wake, trigger: 'manual', processed_event_ids: [] }], { wakeId: wake });
    b.store.appendEvents(id, [{ type: 'session.thread_created', session_thread_id: kid, agent_name: 'test', title: `task of ${kid}` }], { wakeId: wake });
  }
  b.h.write(`sessions/${child}/runtime/relations.json`, JSON.stringify({ session_id: child, children: [{ session_id: grandchild, title: `task of ${grandchild}` }] }));
  b.h.write(`sessions/${mine}/runtime/relations.json`, JSON.stringify({ session_id: mine, children: [{ session_id: child }] }));
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: RUN });
  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: RUN, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  const get = async (credential: string, url: string) => {
    const res = await fetch(`${b.server.url}/v1/sessions/${url}`, { headers: { authorization: `Bearer ${credential}` } });
    return { status: res.status, body: (await res.json()) as { children?: Array<{ session_id: string }> | null; data?: Array<{ name: string }> } };
  };
  const kids = (r: { body: { children?: Array<{ session_id: string }> | null } }) => r.body.children?.map((c) => c.session_id) ?? r.body.children;
  // Its own session: its children. A child: the child itself, but not the child's children.
  assert.deepEqual(kids(await get(token, `${mine}/overview`)), [child]);
  assert.equal(kids(await get(token, `${child}/overview`)), null);
  assert.equal((await get(token, `${grandchild}/overview`)).status, 404);
  assert.equal((await get(token, `${mine}/runtime/relations.json`)).status, 200);
  assert.equal((await get(token, `${child}/runtime/relations.json`)).status, 404);
  assert.deepEqual((await get(token, `${child}/runtime`)).body.data?.map((f) => f.name), []);
  // The key sees the whole tree.
  assert.deepEqual(kids(await get(KEY, `${child}/overview`)), [grandchild]);
  assert.equal((await get(KEY, `${child}/runtime/relations.json`)).status, 200);
});
