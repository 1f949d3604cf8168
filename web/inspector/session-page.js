// One session: its events live (the SSE stream, opened before the first
// page is listed, merged by id: docs/http.md "Resuming"), newest first, older
// pages as the list scrolls (GET …/events?order=desc, so a log of any length
// opens with one page); beside them what waits, the actions, the plan, the
// children, usage over time and the runtime/ files.
import { useCallback, useEffect, useRef, useState } from './vendor/hooks.mjs';
import { api, html, openStream, qs } from './api.js';
import { outcomeState, tokens, usd, when, whyItWaits } from './format.js';
import { EventItem } from './event-item.js';
import { Actions } from './actions.js';
import { UsageChart } from './usage-chart.js';
import { PlanBox, RuntimePanel } from './runtime-panel.js';

const PAGE = 100;

function ChildTree({ children }) {
  if (!children?.length) return html`<p class="muted">No children.</p>`;
  return html`<ul class="tree">${children.map((c) => html`<${ChildNode} key=${c.session_id} c=${c} />`)}</ul>`;
}

function ChildNode({ c }) {
  const [open, setOpen] = useState(false);
  const [sub, setSub] = useState(null);
  const toggle = () => {
    setOpen(!open);
    if (!sub) api('GET', `/v1/sessions/${c.session_id}/overview`).then((o) => setSub(o.children), () => setSub([]));
  };
  return html`<li>
    <button class="toggle" aria-expanded=${open} aria-label="children of this child" onClick=${toggle}>${open ? '▾' : '▸'}</button>
    <a href=${`#/s/${c.session_id}`}>${c.title || c.session_id.slice(-12)}</a>
    <span class=${`st st-${c.status}`}>${c.status}</span> <span class="muted">${c.agent} · ${usd(c.cost_usd)}</span>
    ${open && (sub ? html`<${ChildTree} children=${sub} />` : html`<p class="muted">loading…</p>`)}
  </li>`;
}

export function SessionPage({ id }) {
  const [session, setSession] = useState(null);
  const [overview, setOverview] = useState(null);
  const [events, setEvents] = useState([]);
  const [next, setNext] = useState(undefined);
  const [live, setLive] = useState('connecting');
  const [err, setErr] = useState(null);
  const [ticks, setTicks] = useState(0);
  const seen = useRef(new Set());
  const loadingOlder = useRef(false);
  const sentinel = useRef(null);

  const merge = useCallback((list, atTop) => {
    const fresh = list.filter((e) => !seen.current.has(e.id));
    for (const e of fresh) seen.current.add(e.id);
    if (fresh.length === 0) return;
    setEvents((old) => {
      const all = atTop ? [...fresh, ...old] : [...old, ...fresh];
      // Newest first, whatever order they came in (the stream and a page can overlap).
      return atTop ? all.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)) : all;
    });
  }, []);

  const refresh = useCallback(() => {
    api('GET', `/v1/sessions/${id}`).then(setSession, (e) => setErr(e.message));
    api('GET', `/v1/sessions/${id}/overview`).then(setOverview, () => {});
    setTicks((t) => t + 1);
  }, [id]);

  useEffect(() => {
    let timer = null;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(refresh, 250);
    };
    let wasClosed = false;
    const stop = openStream(
      id,
      (e) => {
        merge([e], true);
        soon();
      },
      (state) => {
        setLive(state);
        if (state === 'closed') wasClosed = true;
        else if (wasClosed) api('GET', `/v1/sessions/${id}/events${qs({ order: 'desc', limit: PAGE })}`).then((r) => merge(r.data, true), () => {});
      },
    );
    api('GET', `/v1/sessions/${id}/events${qs({ order: 'desc', limit: PAGE })}`).then(
      (r) => {
        merge(r.data, true);
        setNext(r.next_page);
      },
      (e) => setErr(e.message),
    );
    refresh();
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, [id]);

  const older = useCallback(async () => {
    if (!next || loadingOlder.current) return;
    loadingOlder.current = true;
    try {
      const r = await api('GET', `/v1/sessions/${id}/events${qs({ order: 'desc', limit: PAGE, page: next })}`);
      merge(r.data, false);
      setNext(r.next_page);
    } finally {
      loadingOlder.current = false;
    }
  }, [id, next]);

  useEffect(() => {
    if (!sentinel.current) return;
    const io = new IntersectionObserver((es) => es.some((x) => x.isIntersecting) && older(), { rootMargin: '400px' });
    io.observe(sentinel.current);
    return () => io.disconnect();
    // The sentinel exists once the session has loaded: observe it then too.
  }, [older, session !== null]);

  if (err && !session) return html`<main><p class="error" role="alert">${err}</p><a href="#/">← Sessions</a></main>`;
  if (!session) return html`<main><p>Loading…</p></main>`;
  const u = session.usage;
  return html`<main class="session">
    <nav><a href="#/">← Sessions</a></nav>
    <header class="session-head">
      <h1>${session.title || session.id}</h1>
      <div class="meta">
        <span class=${`st st-${session.status}`}>${session.status}</span>
        <span class="why">${whyItWaits(session, overview)}</span>
        <span>agent ${session.agent.id}</span>
        <span>${tokens(u.input_tokens + (u.cache_read_input_tokens ?? 0))} in / ${tokens(u.output_tokens)} out · ${usd(u.cost_usd)}${overview && overview.tree_usage.cost_usd !== u.cost_usd ? ` (tree ${usd(overview.tree_usage.cost_usd)})` : ''}</span>
        <span>outcome ${outcomeState(session)}</span>
        ${overview?.next_wake_at && html`<span>next revisit ${when(overview.next_wake_at)}</span>`}
        ${session.parent_session_id && html`<a href=${`#/s/${session.parent_session_id}`}>parent</a>`}
        <span class=${`live live-${live}`} aria-live="polite">${live === 'open' ? '● live' : live === 'closed' ? '○ reconnecting' : '○ connecting'}</span>
      </div>
      <div class="muted id">${session.id}</div>
    </header>
    <${PlanBox} id=${id} version=${ticks} />
    <div class="cols">
      <section class="events" aria-label="Events, newest first">
        <h2>Events <span class="muted">newest first</span></h2>
        <ol class="event-list">${events.map((e) => html`<${EventItem} key=${e.id} e=${e} />`)}</ol>
        <div ref=${sentinel} class="sentinel">${next ? html`<button onClick=${older}>Older events</button>` : next === null ? html`<span class="muted">The start of the log.</span>` : ''}</div>
      </section>
      <aside class="side">
        <${Actions} id=${id} session=${session} overview=${overview} onDone=${refresh} />
        ${session.outcome_evaluations.length > 0 && html`<section><h2>Outcomes</h2><ul>${session.outcome_evaluations.map((o) => html`<li key=${o.outcome_id}><strong>${o.result}</strong> ${o.description}${o.explanation ? html`<div class="text muted">${o.explanation}</div>` : ''}</li>`)}</ul></section>`}
        <section><h2>Children</h2><${ChildTree} children=${overview?.children} /></section>
        <section><h2>Usage over time</h2><${UsageChart} events=${events} /></section>
        <section><h2>Runtime files</h2><${RuntimePanel} id=${id} version=${ticks} /></section>
      </aside>
    </div>
  </main>`;
}
