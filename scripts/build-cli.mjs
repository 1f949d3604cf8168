#!/usr/bin/env node
// The second half of `npm run build`: after tsc has compiled src/ to dist/,
// replaces dist/cli/main.js (the `openboa` binary) with an esbuild bundle of
// src/cli/main.ts, its shared code and each command's code in
// dist/cli/chunks/. Why: a command then reads a few files instead of ~160
// modules (zod alone is ~95), which is most of a cold start's cost.
// Each command stays its own chunk, imported only when it runs, as in src.
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

await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/cli/main.ts' },
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
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
});
chmodSync(path.join(outdir, 'main.js'), 0o755);
