/**
 * The inspector in a real browser (chromium through playwright-core): sign
 * in with the key, watch a session's events arrive live while the scripted
 * model answers, allow a waiting tool use and see the run go on, send a
 * message, pick an escalation's option, and show an agent's HTML as text
 * with nothing run. Each test saves a screenshot (tests/web/browser.ts).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { closeBrowser, NO_BROWSER, webBench } from './browser.js';

after(() => closeBrowser());

const ev = (type: string) => `li.ev[data-type="${type}"]`;

test('the page opens with the key; a session\'s events arrive live while the model answers', { skip: NO_BROWSER }, async (t) => {
  const w = await webBench(t, { steps: [{ text: 'hello from the model' }] });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'live one' });
  // The list shows it (polled), then its page opens with nothing yet.
  await w.page.getByRole('link', { name: 'live one' }).click();
  await w.page.locator('.live-open').waitFor();
  assert.equal(await w.page.locator(ev('agent.message')).count(), 0);
  // Sent by a program while the page watches: the events come in over the stream, no reload.
  await w.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'say hello' }] }] });
  await w.page.locator(ev('agent.message'), { hasText: 'hello from the model' }).waitFor();
  await w.page.locator(ev('session.status_idle')).first().waitFor();
  // Newest first: the reply is above the message that asked for it.
  const types = await w.page.locator('li.ev').evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));
  assert.ok(types.indexOf('agent.message') < types.indexOf('user.message'), types.join(', '));
  await w.page.locator('.session-head .st', { hasText: 'idle' }).waitFor();
  fs.statSync(await w.shot('session-live'));
  assert.deepEqual(w.pageErrors, []);
});

test('allow a waiting tool use from the page: the run goes on and writes the file', { skip: NO_BROWSER }, async (t) => {
  const w = await webBench(t, {
    agent: { tools: { write: { permission: 'always_ask' } } },
    steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'report.md', content: 'numbers' } }] }, { text: 'written it' }],
  });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'needs a yes', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'write the report' }] }] });
  await w.daemon.result((r) => r.session_id === s.id && r.stop_reason?.type === 'requires_action');
  // The list says why it waits.
  await w.page.locator('tr', { hasText: 'needs a yes' }).locator('.why', { hasText: 'waiting for a confirmation (write)' }).waitFor();
  await w.shot('sessions-waiting');
  await w.page.getByRole('link', { name: 'needs a yes' }).click();
  const item = w.page.locator('.waiting-item', { hasText: 'write' });
  await item.waitFor();
  await w.shot('session-waiting');
  await item.getByRole('button', { name: 'Allow' }).click();
  await w.page.locator(ev('agent.message'), { hasText: 'written it' }).waitFor();
  assert.equal(await w.page.locator('.waiting-item').count(), 0);
  await w.page.locator('.session-head .st', { hasText: 'idle' }).waitFor();
  const confirmation = w.events(s.id).find((e) => e.type === 'user.tool_confirmation');
  assert.ok(confirmation && 'result' in confirmation && confirmation.result === 'allow');
  assert.equal(fs.readFileSync(`${w.store.paths(s.id).workspace}/report.md`, 'utf8'), 'numbers');
  await w.shot('session-allowed');
});

test('send a message from the page (keyboard: Ctrl+Enter); the reply arrives', { skip: NO_BROWSER }, async (t) => {
  const w = await webBench(t, { steps: [{ text: 'first reply' }, { text: 'second reply' }] });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'chat' });
  await w.page.goto(`${w.server.url}/#/s/${s.id}`);
  await w.page.getByLabel('Message').fill('typed in the page');
  await w.page.getByRole('button', { name: 'Send' }).click();
  await w.page.locator(ev('agent.message'), { hasText: 'first reply' }).waitFor();
  await w.page.getByLabel('Message').fill('and with the keyboard');
  await w.page.getByLabel('Message').press('Control+Enter');
  await w.page.locator(ev('agent.message'), { hasText: 'second reply' }).waitFor();
  const sent = w.events(s.id).flatMap((e) => (e.type === 'user.message' ? [JSON.stringify(e.content)] : []));
  assert.equal(sent.length, 2);
  assert.match(sent[0]!, /typed in the page/);
  assert.match(sent[1]!, /and with the keyboard/);
  await w.shot('session-message');
});

test('pick an escalation\'s option from the page: the answer names it and the run goes on', { skip: NO_BROWSER }, async (t) => {
  const w = await webBench(t, {
    steps: [{ toolUses: [{ id: 'toolu_e', name: 'escalate', input: { situation: 'Two ways to ship', options: ['ship today', 'wait for review'], confidence: 0.4, recommendation: 2 } }] }, { text: 'waiting for review then' }],
  });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'a decision', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'ship it?' }] }] });
  await w.daemon.result((r) => r.session_id === s.id && r.stop_reason?.type === 'requires_action');
  await w.page.goto(`${w.server.url}/#/s/${s.id}`);
  await w.page.getByText('Two ways to ship', { exact: true }).waitFor();
  await w.shot('session-escalation');
  await w.page.getByRole('button', { name: 'Pick 2' }).click();
  await w.page.locator(ev('agent.message'), { hasText: 'waiting for review then' }).waitFor();
  const answer = w.events(s.id).find((e) => e.type === 'user.custom_tool_result');
  assert.match(JSON.stringify(answer), /option 2: wait for review/);
});

test('an agent\'s <img onerror> and <script> are shown as text and run nothing', { skip: NO_BROWSER }, async (t) => {
  const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold?</b>';
  const w = await webBench(t, { steps: [{ text: payload }] });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: '<img src=y onerror="window.__pwned=3">', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: payload }] }] });
  await w.daemon.result((r) => r.session_id === s.id);
  // The list shows the title as text too.
  await w.page.getByText('<img src=y onerror="window.__pwned=3">').waitFor();
  await w.page.goto(`${w.server.url}/#/s/${s.id}`);
  const msg = w.page.locator(ev('agent.message'));
  await msg.waitFor();
  assert.equal((await msg.locator('.text').textContent())?.trim(), payload);
  assert.equal(await w.page.locator('main img, main script, main b').count(), 0);
  assert.equal(await w.page.evaluate(() => (globalThis as { __pwned?: number }).__pwned), undefined);
  await w.shot('session-html-as-text');
});

test('at phone width the pages fit without sideways scrolling; the keyboard reaches the controls', { skip: NO_BROWSER }, async (t) => {
  const w = await webBench(t, { steps: [{ text: 'a reply that is long enough to wrap on a narrow screen, and then some more words' }] }, { width: 390, height: 844 });
  const s = await w.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'on a phone', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
  await w.daemon.result((r) => r.session_id === s.id);
  type Doc = { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
  const fits = () => w.page.evaluate(() => (globalThis as unknown as Doc).document.documentElement.scrollWidth <= (globalThis as unknown as Doc).innerWidth);
  await w.page.getByRole('link', { name: 'on a phone' }).waitFor();
  assert.equal(await fits(), true);
  await w.shot('phone-sessions');
  await w.page.goto(`${w.server.url}/#/s/${s.id}`);
  await w.page.locator(ev('agent.message')).waitFor();
  assert.equal(await fits(), true);
  // Tab from the message box reaches Send; Enter on it sends nothing while the box is empty (the button is disabled).
  await w.page.getByLabel('Message').focus();
  await w.page.keyboard.type('from the keyboard');
  await w.page.keyboard.press('Tab');
  assert.equal(await w.page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document.activeElement?.textContent), 'Send');
  await w.shot('phone-session');
});
