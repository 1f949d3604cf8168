/**
 * `npm run bench -- inspector`: the inspector in a real browser (Debian's
 * chromium through playwright-core) on a home of 10,000 sessions, one of
 * them with 100,000 events.
 *
 * - sessions page: from navigation start to the first page of rows rendered
 *   with their links (the page is usable: filters, rows, pager), target < 1 s;
 * - session page: from navigation start to the newest events rendered,
 *   target < 1 s (one page of GET …/events?order=desc; older on scroll);
 * - older events: one more page after a scroll.
 *
 * - for contrast, the key form: the same modules loaded, no API call.
 *
 * Each is measured in the page (performance.now() is ms since navigation
 * start), five times after one warm-up; median and worst reported.
 */
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { systemDeps } from '../src/core/foundation/deps.js';
import type { Runtime } from '../src/core/run/run-context.js';
import { appendLines } from '../src/core/store/jsonl.js';
import { runProof } from '../src/core/store/run-key.js';
import { startApiServer } from '../src/http/server.js';
import { parseListen } from '../src/http/listen-address.js';
import { benchHome, conversationLines, manySessions } from './fixtures.js';
import { median, round } from './stats.js';

const KEY = 'bench-inspector-key';
const RUNS = 5;

export async function benchInspector() {
  const b = benchHome();
  const browser = await chromium.launch({ executablePath: process.env.OPENBOA_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const t0 = performance.now();
    manySessions(b, 9_999);
    const big = b.store.create({ agentId: 'fast', environmentId: 'local', title: 'one hundred thousand events' });
    appendLines(b.store.paths(big.id).events, conversationLines(100_000, (w) => runProof(b.store.runKey(big.id), big.id, w)));
    b.store.snapshot(big.id);
    const setupS = (performance.now() - t0) / 1000;
    const rt: Runtime = { home: b.home, store: b.store, deps: systemDeps() };
    const server = await startApiServer(rt, parseListen('127.0.0.1:0'), { apiKey: KEY });
    try {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await ctx.addInitScript(`sessionStorage.setItem('openboa.inspector.key', ${JSON.stringify(KEY)})`);
      const page = await ctx.newPage();
      page.setDefaultTimeout(30_000);
      const measure = async (hash: string, ready: string, extra?: () => Promise<void>) => {
        const ms: number[] = [];
        for (let i = 0; i <= RUNS; i++) {
          await page.goto('about:blank');
          await page.goto(`${server.url}/${hash}`);
          await page.waitForSelector(ready);
          if (extra) await extra();
          const at = await page.evaluate(() => performance.now());
          if (i > 0) ms.push(at);
        }
        return { median_ms: round(median(ms)), worst_ms: round(Math.max(...ms)), runs: RUNS };
      };
      // For contrast: the same modules with no API call (the key form, in a context without the key).
      const bare = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const form: number[] = [];
      const bp = await bare.newPage();
      for (let i = 0; i <= RUNS; i++) {
        await bp.goto('about:blank');
        await bp.goto(`${server.url}/`);
        await bp.waitForSelector('#key');
        const at = await bp.evaluate(() => performance.now());
        if (i > 0) form.push(at);
      }
      await bare.close();
      const sessions = await measure('#/', 'table.list tbody tr a');
      const session = await measure(`#/s/${big.id}`, 'li.ev[data-type="session.status_idle"]');
      // Older on scroll: the next page of 100 after the sentinel comes into view.
      const older: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const before = await page.locator('li.ev').count();
        const s0 = performance.now();
        await page.locator('.sentinel').scrollIntoViewIfNeeded();
        await page.locator('li.ev').nth(before).waitFor({ state: 'attached' });
        older.push(performance.now() - s0);
      }
      await ctx.close();
      return {
        setup_seconds: round(setupS, 1),
        sessions_on_disk: 10_000,
        events_in_the_big_session: 100_000,
        key_form_no_api_call: { median_ms: round(median(form)), worst_ms: round(Math.max(...form)), runs: RUNS },
        sessions_page_interactive: { ...sessions, target: '< 1000 ms' },
        session_page_100k_events_open: { ...session, target: '< 1000 ms' },
        older_page_on_scroll: { median_ms: round(median(older)), worst_ms: round(Math.max(...older)), runs: RUNS },
      };
    } finally {
      await server.close();
    }
  } finally {
    await browser.close();
    b.cleanup();
  }
}
