// Usage and cost over time, as a small inline SVG: the running sum of each
// model request's tokens and cost (span.model_request_end) among the events
// loaded so far. Drawn with SVG elements, no text from the log.
import { html } from './api.js';
import { tokens, usd } from './format.js';

export function UsageChart({ events }) {
  const ends = events.filter((e) => e.type === 'span.model_request_end').sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  if (ends.length < 1) return html`<p class="muted">No model requests among the loaded events.</p>`;
  let tok = 0;
  let cost = 0;
  const pts = ends.map((e) => {
    const u = e.model_usage ?? {};
    tok += (u.input_tokens ?? 0) + (u.output_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    cost += e.cost_usd ?? 0;
    return { t: Date.parse(e.created_at), tok, cost };
  });
  const W = 300;
  const H = 80;
  const t0 = pts[0].t;
  const span = Math.max(1, pts[pts.length - 1].t - t0);
  const x = (p) => ((p.t - t0) / span) * (W - 4) + 2;
  const line = (f, max) => pts.map((p, i) => `${i ? 'L' : 'M'}${x(p).toFixed(1)},${(H - 2 - (f(p) / Math.max(max, 1e-9)) * (H - 4)).toFixed(1)}`).join(' ');
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} width="100%" height=${H} role="img" aria-label=${`${tokens(tok)} tokens and ${usd(cost)} over ${pts.length} model requests`}>
      <path d=${line((p) => p.tok, tok)} class="line-tokens" fill="none" />
      <path d=${line((p) => p.cost, cost)} class="line-cost" fill="none" />
      ${pts.length <= 60 && pts.map((p, i) => html`<circle key=${i} cx=${x(p).toFixed(1)} cy=${(H - 2 - (p.tok / Math.max(tok, 1e-9)) * (H - 4)).toFixed(1)} r="2.5" class="dot-tokens" />`)}
    </svg>
    <figcaption><span class="key-tokens">tokens ${tokens(tok)}</span> · <span class="key-cost">cost ${usd(cost)}</span> · ${pts.length} request(s), loaded events only</figcaption>
  </figure>`;
}
