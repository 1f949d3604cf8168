// The session's runtime/ files (GET …/runtime, GET …/runtime/{name}), shown as text.
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, html } from './api.js';
import { when } from './format.js';

/** `version` changes when the session moved on: the listing is read again (an open file is not). */
export function RuntimePanel({ id, version }) {
  const [files, setFiles] = useState(null);
  const [open, setOpen] = useState(null);
  const [content, setContent] = useState(null);
  useEffect(() => {
    api('GET', `/v1/sessions/${id}/runtime`).then((r) => setFiles(r.data), () => setFiles([]));
  }, [id, version]);
  const show = async (name) => {
    setOpen(name);
    setContent('loading…');
    try {
      const r = await api('GET', `/v1/sessions/${id}/runtime/${name}`);
      setContent(`${r.content}${r.truncated ? `\n… (${r.size} bytes; only part shown)` : ''}`);
    } catch (e) {
      setContent(e.message);
    }
  };
  if (!files) return html`<p class="muted">loading…</p>`;
  if (files.length === 0) return html`<p class="muted">No runtime files yet (a run writes them).</p>`;
  return html`<div class="runtime">
    <ul class="files">${files.map((f) => html`<li key=${f.name}><button class=${`link${open === f.name ? ' current' : ''}`} onClick=${() => show(f.name)}>${f.name}</button> <span class="muted">${f.size} B · ${when(f.modified_at)}</span></li>`)}</ul>
    ${open && html`<pre class="file" aria-label=${open}>${content}</pre>`}
  </div>`;
}

/** The agent's plan (runtime/plan.json: {items: [{content, status}], updated_at}), when there is one. */
export function PlanBox({ id, version }) {
  const [plan, setPlan] = useState(null);
  useEffect(() => {
    // The listing first: a session without a plan costs no 404.
    api('GET', `/v1/sessions/${id}/runtime`)
      .then((l) => (l.data.some((f) => f.name === 'plan.json') ? api('GET', `/v1/sessions/${id}/runtime/plan.json`) : Promise.reject(new Error('no plan'))))
      .then(
      (r) => {
        try {
          setPlan(JSON.parse(r.content));
        } catch {
          setPlan(null);
        }
      },
      () => setPlan(null),
    );
  }, [id, version]);
  const items = Array.isArray(plan?.items) ? plan.items : [];
  if (items.length === 0) return null;
  const mark = { done: '☑', in_progress: '▶', pending: '☐' };
  return html`<section class="plan" aria-label="Plan">
    <h2>Plan <span class="muted">${items.filter((i) => i.status === 'done').length}/${items.length} done${plan.updated_at ? ` · ${when(plan.updated_at)}` : ''}</span></h2>
    <ol>${items.map((i, k) => html`<li key=${k} class=${`plan-${i.status}`}><span aria-hidden="true">${mark[i.status] ?? '·'}</span> ${String(i.content ?? '')}</li>`)}</ol>
  </section>`;
}
