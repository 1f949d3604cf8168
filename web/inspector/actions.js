// What a person can do from a session's page; each control is one /v1 call
// (docs/inspector.md lists them). Answers go to the waiting tool uses the
// overview lists; the page shows the session go on through its stream.
import { useState } from './vendor/hooks.mjs';
import { api, html, sendEvents } from './api.js';

function useAct(onDone) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  const act = async (fn) => {
    setBusy(true);
    setErr(null);
    try {
      await fn();
      onDone();
    } catch (e) {
      setErr(e.message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, err, act };
}

function Waiting({ id, w, onDone }) {
  const { busy, err, act } = useAct(onDone);
  const [msg, setMsg] = useState('');
  const [isError, setIsError] = useState(false);
  const esc = w.escalation;
  let controls;
  if (esc) {
    controls = html`<p class="text">${esc.situation}</p>
      <ol class="options">${esc.options.map((o, i) => html`<li key=${i}><button disabled=${busy} onClick=${() => act(() => sendEvents(id, [{ type: 'user.escalation_answer', escalation_id: w.id, pick: i + 1 }]))}>Pick ${i + 1}</button> <span>${o}</span>${esc.recommendation === i + 1 ? html` <em>(recommended)</em>` : ''}</li>`)}</ol>
      <p class="muted">confidence ${String(esc.confidence)}</p>
      <div class="row"><input aria-label="Answer in words" placeholder="…or answer in words" value=${msg} onInput=${(e) => setMsg(e.currentTarget.value)} />
      <button disabled=${busy || !msg.trim()} onClick=${() => act(() => sendEvents(id, [{ type: 'user.escalation_answer', escalation_id: w.id, message: msg }]))}>Answer</button></div>`;
  } else if (w.kind === 'tool') {
    controls = html`<div class="row">
      <button class="allow" disabled=${busy} onClick=${() => act(() => sendEvents(id, [{ type: 'user.tool_confirmation', tool_use_id: w.id, result: 'allow' }]))}>Allow</button>
      <input aria-label="Why it is denied" placeholder="message (for deny)" value=${msg} onInput=${(e) => setMsg(e.currentTarget.value)} />
      <button class="deny" disabled=${busy} onClick=${() => act(() => sendEvents(id, [{ type: 'user.tool_confirmation', tool_use_id: w.id, result: 'deny', ...(msg.trim() ? { deny_message: msg } : {}) }]))}>Deny</button>
    </div>`;
  } else {
    controls = html`<textarea aria-label="The tool's result" rows="3" value=${msg} onInput=${(e) => setMsg(e.currentTarget.value)}></textarea>
      <div class="row"><label class="check"><input type="checkbox" checked=${isError} onChange=${(e) => setIsError(e.currentTarget.checked)} /> is an error</label>
      <button disabled=${busy} onClick=${() => act(() => sendEvents(id, [{ type: 'user.custom_tool_result', custom_tool_use_id: w.id, content: [{ type: 'text', text: msg }], is_error: isError }]))}>Send result</button></div>`;
  }
  return html`<li class="waiting-item" data-tool-use=${w.id}>
    <div><strong>${esc ? 'Escalation' : w.kind === 'tool' ? 'Confirm tool use' : 'Custom tool'}</strong> <code>${w.name}</code> <span class="muted">${w.id}</span></div>
    ${controls}
    ${err && html`<p class="error" role="alert">${err}</p>`}
  </li>`;
}

export function Actions({ id, session, overview, onDone }) {
  const { busy, err, act } = useAct(onDone);
  const [msg, setMsg] = useState('');
  const [outcome, setOutcome] = useState('');
  const [rubric, setRubric] = useState('');
  const send = () => act(async () => {
    await sendEvents(id, [{ type: 'user.message', content: [{ type: 'text', text: msg }] }]);
    setMsg('');
  });
  const paused = overview?.paused;
  return html`<section class="actions" aria-label="Actions">
    ${overview?.waiting?.length > 0 && html`<div class="waiting"><h2>Waiting on you</h2><ul>${overview.waiting.map((w) => html`<${Waiting} key=${w.id} id=${id} w=${w} onDone=${onDone} />`)}</ul></div>`}
    <form class="message" onSubmit=${(e) => (e.preventDefault(), msg.trim() && send())}>
      <label for="msg">Message</label>
      <textarea id="msg" rows="3" value=${msg} onInput=${(e) => setMsg(e.currentTarget.value)} onKeyDown=${(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && msg.trim() && (e.preventDefault(), send())} placeholder="Ctrl+Enter sends"></textarea>
      <div class="row">
        <button type="submit" disabled=${busy || !msg.trim()}>Send</button>
        <button type="button" disabled=${busy || session.status !== 'running'} onClick=${() => act(() => sendEvents(id, [{ type: 'user.interrupt' }]))}>Interrupt</button>
        ${paused ? html`<button type="button" disabled=${busy} onClick=${() => act(() => api('POST', `/v1/sessions/${id}/resume`, {}))}>Resume</button>`
                 : html`<button type="button" disabled=${busy} onClick=${() => act(() => api('POST', `/v1/sessions/${id}/pause`, {}))}>Pause</button>`}
      </div>
    </form>
    <details class="outcome-form">
      <summary>Define an outcome</summary>
      <form onSubmit=${(e) => (e.preventDefault(), act(async () => {
        await sendEvents(id, [{ type: 'user.define_outcome', description: outcome, ...(rubric.trim() ? { rubric: { type: 'text', content: rubric } } : {}) }]);
        setOutcome('');
        setRubric('');
      }))}>
        <label>What done looks like <textarea rows="2" value=${outcome} onInput=${(e) => setOutcome(e.currentTarget.value)}></textarea></label>
        <label>Rubric (optional) <textarea rows="2" value=${rubric} onInput=${(e) => setRubric(e.currentTarget.value)}></textarea></label>
        <button type="submit" disabled=${busy || !outcome.trim()}>Define outcome</button>
      </form>
    </details>
    ${err && html`<p class="error" role="alert">${err}</p>`}
  </section>`;
}
