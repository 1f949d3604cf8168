// The sessions list: one page of GET /v1/sessions at a time (never all), polled
// every POLL_MS with the same cursor, so it stays live without a reload. Each
// row's "why" and next revisit come from GET /v1/sessions/{id}/overview.
import { useEffect, useRef, useState } from './vendor/hooks.mjs';
import { api, html, qs } from './api.js';
import { ago, outcomeState, tokens, usd, when, whyItWaits } from './format.js';

/** How often the page asks again, ms: live enough for a person, a few cheap requests per page. */
const POLL_MS = 3000;
const PAGE = 25;
const STATUSES = ['', 'waiting', 'running', 'idle', 'rescheduling', 'terminated'];

function ChildRows({ id, depth }) {
  const [children, setChildren] = useState(null);
  useEffect(() => {
    api('GET', `/v1/sessions/${id}/overview`).then((o) => setChildren(o.children), () => setChildren([]));
  }, [id]);
  if (!children) return html`<tr><td colspan="8" class="muted">loading children…</td></tr>`;
  return children.map(
    (c) => html`<tr class="child" key=${c.session_id}>
      <td class=${`indent-${Math.min(depth, 4)}`}>↳ <span class=${`st st-${c.status}`}>${c.status}</span></td>
      <td>${c.agent}</td>
      <td><a href=${`#/s/${c.session_id}`}>${c.title || c.session_id.slice(-12)}</a></td>
      <td colspan="4"></td>
      <td>${usd(c.cost_usd)}</td>
    </tr>`,
  );
}

function Row({ s, o, tree }) {
  const [open, setOpen] = useState(false);
  const hasChildren = o && o.children.length > 0;
  return html`
    <tr key=${s.id} class=${s.parent_session_id ? 'child' : ''}>
      <td>
        ${tree && hasChildren && html`<button class="toggle" aria-expanded=${open} aria-label=${open ? 'hide children' : 'show children'} onClick=${() => setOpen(!open)}>${open ? '▾' : '▸'}</button>`}
        <span class=${`st st-${s.status}`}>${s.status}</span>
        <div class="why">${whyItWaits(s, o)}</div>
      </td>
      <td>${s.agent.id}</td>
      <td><a href=${`#/s/${s.id}`}>${s.title || s.id.slice(-12)}</a>${s.parent_session_id && html` <span class="muted">(child)</span>`}</td>
      <td title=${s.updated_at}>${ago(s.updated_at)}</td>
      <td>${o?.next_wake_at ? when(o.next_wake_at) : '–'}</td>
      <td>${tokens(s.usage.input_tokens + (s.usage.cache_read_input_tokens ?? 0))} / ${tokens(s.usage.output_tokens)}</td>
      <td>${outcomeState(s)}</td>
      <td>${usd(s.usage.cost_usd)}</td>
    </tr>
    ${open && html`<${ChildRows} id=${s.id} depth=${1} />`}`;
}

export function SessionsPage() {
  const [status, setStatus] = useState('');
  const [agent, setAgent] = useState('');
  const [tree, setTree] = useState(false);
  const [agents, setAgents] = useState([]);
  const [cursor, setCursor] = useState(null);
  const [page, setPage] = useState(null);
  const [overviews, setOverviews] = useState({});
  const [err, setErr] = useState(null);
  const [q, setQ] = useState('');
  const [hits, setHits] = useState(null);
  const [incomplete, setIncomplete] = useState(false);
  const seq = useRef(0);

  useEffect(() => {
    api('GET', '/v1/agents?limit=100').then((r) => setAgents(r.data.map((a) => a.id)), () => {});
  }, []);

  useEffect(() => {
    let stop = false;
    let timer;
    const load = async () => {
      const mine = ++seq.current;
      try {
        const statuses = status === 'waiting' ? ['idle'] : status ? [status] : undefined;
        const r = await api('GET', `/v1/sessions${qs({ limit: PAGE, page: cursor, statuses, agent_id: agent })}`);
        if (stop || mine !== seq.current) return;
        setPage(r);
        setErr(null);
        // Overviews after the page shows: the list is usable before they arrive.
        const pairs = await Promise.all(r.data.map((s) => api('GET', `/v1/sessions/${s.id}/overview`).then((o) => [s.id, o], () => [s.id, null])));
        if (!stop && mine === seq.current) setOverviews(Object.fromEntries(pairs));
      } catch (e) {
        if (!stop) setErr(e.message);
      }
      if (!stop) timer = setTimeout(load, POLL_MS);
    };
    load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [status, agent, cursor]);

  const search = async (e) => {
    e.preventDefault();
    if (!q.trim()) return setHits(null);
    try {
      const r = await api('GET', `/v1/search${qs({ q, agent_id: agent })}`);
      setHits(r.data);
      setIncomplete(r.incomplete);
    } catch (x) {
      setErr(x.message);
    }
  };

  const rows = (page?.data ?? []).filter((s) => (tree || !s.parent_session_id) && (status !== 'waiting' || s.stop_reason?.type === 'requires_action'));
  return html`<main class="sessions">
    <h1>Sessions</h1>
    <div class="filters" role="search">
      <label>Status <select value=${status} onChange=${(e) => (setStatus(e.currentTarget.value), setCursor(null))}>
        ${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
      </select></label>
      <label>Agent <select value=${agent} onChange=${(e) => (setAgent(e.currentTarget.value), setCursor(null))}>
        <option value="">any</option>
        ${agents.map((a) => html`<option value=${a}>${a}</option>`)}
      </select></label>
      <label class="check"><input type="checkbox" checked=${tree} onChange=${(e) => setTree(e.currentTarget.checked)} /> Show children (tree)</label>
      <form class="search" onSubmit=${search}>
        <input type="search" aria-label="Search the sessions' text" placeholder="Search text…" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
    </div>
    ${err && html`<p class="error" role="alert">${err}</p>`}
    ${hits && html`<section class="hits" aria-label="Search results">
      <h2>${hits.length} candidate(s)${incomplete ? ' (the index is still catching up: search again for more)' : ''} <button class="link" onClick=${() => (setHits(null), setQ(''))}>clear</button></h2>
      <ul>${hits.map((h) => html`<li key=${h.event_id}><a href=${`#/s/${h.session_id}`}>${h.title || h.session_id.slice(-12)}</a> <span class="muted">${h.agent_id} · ${h.kind} · ${when(h.created_at)}</span><div class="snippet">${h.snippet}</div></li>`)}</ul>
    </section>`}
    <div class="table-wrap">
      <table class="list">
        <thead><tr><th>Status</th><th>Agent</th><th>Title</th><th>Last activity</th><th>Next revisit</th><th>Tokens in/out</th><th>Outcome</th><th>Cost</th></tr></thead>
        <tbody>
          ${page === null ? html`<tr><td colspan="8">Loading…</td></tr>` : rows.length === 0 ? html`<tr><td colspan="8" class="muted">No sessions on this page.</td></tr>` : rows.map((s) => html`<${Row} key=${s.id} s=${s} o=${overviews[s.id]} tree=${tree} />`)}
        </tbody>
      </table>
    </div>
    <nav class="pager">
      <button disabled=${!page?.prev_page} onClick=${() => setCursor(page.prev_page)}>← Newer</button>
      <button disabled=${!cursor} onClick=${() => setCursor(null)}>Newest</button>
      <button disabled=${!page?.next_page} onClick=${() => setCursor(page.next_page)}>Older →</button>
    </nav>
  </main>`;
}
