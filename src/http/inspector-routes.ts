/**
 * The inspector (docs/inspector.md): a page at `/` that watches and answers
 * the home's sessions through the public /v1 API, in the browser. This
 * module only serves its static files; the page holds no data until the
 * person gives the key (kept in the tab's sessionStorage) and calls /v1
 * with it like any other client.
 *
 * Files come from fixed tables, never from a path in the request: the
 * page's own modules in `web/inspector/` at the package's root (shipped by
 * package.json "files"), and Preact 11, its hooks and htm 3 from the
 * installed node_modules (no bundler, no network at run time). The hooks
 * module imports the bare specifier "preact", which a browser cannot
 * resolve without an import map (an inline script, which the CSP forbids):
 * it is served with that one import pointed at the served preact module.
 *
 * Every answer carries strict headers: a Content-Security-Policy with no
 * inline script or style and no framing, nosniff, no referrer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Hono } from 'hono';
import type { AuthEnv } from './auth.js';
import { notFound } from './api-error.js';

/** The page's own files in web/inspector/, by the name they are served under (/inspector/<name>). */
const PAGE_FILES = ['app.js', 'api.js', 'format.js', 'sessions-page.js', 'session-page.js', 'event-item.js', 'actions.js', 'usage-chart.js', 'runtime-panel.js', 'style.css'] as const;

export const INSPECTOR_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-cache',
});

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The nearest folder at or above this module holding web/inspector/index.html (src/http under tsx, dist/http, dist/cli/chunks bundled). */
function findWebDir(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const web = path.join(dir, 'web', 'inspector');
    if (fs.existsSync(path.join(web, 'index.html'))) return web;
    if (path.dirname(dir) === dir) throw new Error(`no web/inspector/index.html at or above ${from}`);
  }
}

interface Served {
  file: string;
  /** Rewrites the text before it is served (the hooks module's import). */
  rewrite?: (text: string) => string;
}

/** Where each URL's file is: the table every request is looked up in. */
function servedFiles(): Map<string, Served> {
  const web = findWebDir(import.meta.dirname);
  const require = createRequire(import.meta.url);
  const m = new Map<string, Served>();
  m.set('/', { file: path.join(web, 'index.html') });
  for (const name of PAGE_FILES) m.set(`/inspector/${name}`, { file: path.join(web, name) });
  m.set('/inspector/vendor/preact.mjs', { file: require.resolve('preact') });
  m.set('/inspector/vendor/hooks.mjs', { file: require.resolve('preact/hooks'), rewrite: (t) => t.replaceAll('from"preact"', 'from"./preact.mjs"') });
  m.set('/inspector/vendor/htm.mjs', { file: path.join(path.dirname(require.resolve('htm')), 'htm.module.js') });
  return m;
}

export function inspectorRoutes(): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const files = servedFiles();
  const serveFile = (p: string) => {
    const s = files.get(p);
    if (!s) throw notFound(`no route GET ${p}`);
    const text = fs.readFileSync(s.file, 'utf8');
    return new Response(s.rewrite ? s.rewrite(text) : text, { headers: { ...INSPECTOR_HEADERS, 'content-type': TYPES[path.extname(s.file)] ?? 'application/octet-stream' } });
  };
  app.get('/', (c) => serveFile(new URL(c.req.url).pathname));
  app.get('/inspector/*', (c) => serveFile(new URL(c.req.url).pathname));
  return app;
}
