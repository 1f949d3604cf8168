/**
 * A real browser for the inspector's tests: Debian's chromium
 * (/usr/bin/chromium, installed by .ci/run) driven by playwright-core, one
 * browser per test file. Each page is opened on a server from
 * tests/http/api-bench.ts, with an in-process daemon running the sessions
 * on the scripted model. Screenshots go to the test's output folder:
 * OPENBOA_WEB_SHOTS when set, else a temp folder kept after the run (its
 * path is printed once).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { apiBench, KEY, type ApiBench } from '../http/api-bench.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

export const CHROMIUM = process.env.OPENBOA_CHROMIUM ?? '/usr/bin/chromium';
/** Why the browser tests cannot run here (no chromium), or false. */
export const NO_BROWSER: string | false = fs.existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install chromium)`;

let browser: Promise<Browser> | null = null;
export function sharedBrowser(): Promise<Browser> {
  browser ??= chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  return browser;
}
export async function closeBrowser(): Promise<void> {
  if (browser) await (await browser).close();
  browser = null;
}

let shots: string | null = null;
/** The folder screenshots are saved in. */
export function shotDir(): string {
  if (!shots) {
    shots = process.env.OPENBOA_WEB_SHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-web-shots-'));
    fs.mkdirSync(shots, { recursive: true });
  }
  return shots;
}

export interface WebBench extends ApiBench {
  page: Page;
  daemon: TestDaemon;
  /** Saves a screenshot named `name`.png in shotDir(); returns its path. */
  shot(name: string): Promise<string>;
  /** Uncaught exceptions the page raised. */
  pageErrors: string[];
}

/** A home with a server and a daemon, and a browser page signed in with the key (through the form). */
export async function webBench(t: TestContext, o: Parameters<typeof apiBench>[1] = {}, viewport = { width: 1280, height: 800 }): Promise<WebBench> {
  let d: { evaluate(id: string): boolean } | null = null;
  const b = await apiBench(t, { ...o, onAppend: (id) => d?.evaluate(id) });
  const daemon = await startDaemon(t, b);
  d = daemon.d;
  const ctx = await (await sharedBrowser()).newContext({ viewport });
  t.after(() => ctx.close());
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${b.server.url}/`);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Open' }).click();
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  return {
    ...b,
    page,
    daemon,
    pageErrors,
    shot: async (name) => {
      const file = path.join(shotDir(), `${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      return file;
    },
  };
}
