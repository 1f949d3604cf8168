#!/usr/bin/env node
// The second half of `npm run build`: after tsc has compiled src/ to dist/,
// replaces dist/cli/main.js (the `openboa` binary) with an esbuild bundle of
// src/cli/main.ts, its shared code and each command's code in
// dist/cli/chunks/. Why: a command then reads a few files instead of ~160
// modules (zod alone is ~95), which is most of a cold start's cost.
// Each command stays its own chunk, imported only when it runs, as in src.
// The one-shot send's path (main.ts, src/cli/send-lean.ts) is one more
// bundle, dist/cli/send-lean.js, which main.js imports.
//
// node-pty and better-sqlite3 are native; @anthropic-ai/sdk and openai are
// large and loaded only by a run that calls the model: they stay outside,
// imported from node_modules. So do the trace SDK, its OTLP exporter and
// prom-client: loaded only by a daemon asked for traces or metrics, and
// bundled CommonJS behind a dynamic import loses its named exports.
// The rest of dist/ (the library's entry, dist/index.js) is tsc's, unchanged.
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const outdir = path.join(root, 'dist', 'cli');
rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['node-pty', '@anthropic-ai/sdk', 'openai', 'better-sqlite3', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources', 'prom-client'],
  // Bundled CommonJS packages (commander, proper-lockfile, ...) call require() for Node's own modules.
  banner: { js: "import { createRequire as __openboaCreateRequire } from 'node:module';\nconst require = __openboaCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};
const LEAN = path.join(root, 'src', 'cli', 'send-lean.ts');

await build({
  ...common,
  entryPoints: { main: 'src/cli/main.ts' },
  chunkNames: 'chunks/[name]-[hash]',
  // The one-shot send is its own bundle (below): main.js imports dist/cli/send-lean.js as it is.
  plugins: [{ name: 'lean-send-apart', setup: (b) => b.onResolve({ filter: /\/send-lean\.js$/ }, (a) => (path.resolve(a.resolveDir, a.path.replace(/\.js$/, '.ts')) === LEAN ? { path: './send-lean.js', external: true } : undefined)) }],
});
chmodSync(path.join(outdir, 'main.js'), 0o755);

// The one-shot send (src/cli/send-lean.ts) as one file: split into the shared chunks above, it read
// about 20 of them, and each module a process loads costs it; one file is about 14 ms of CPU less, a
// seventh of the whole send. What it imports only when it needs it (the store, when session.json
// cannot say; the daemon's lock reader) are chunks of its own, copies of the ones above.
await build({ ...common, entryPoints: { 'send-lean': LEAN }, chunkNames: 'chunks/lean/[name]-[hash]' });
