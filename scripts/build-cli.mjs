#!/usr/bin/env node
// The second half of `npm run build`: after tsc has compiled src/ to dist/,
// replaces dist/cli/main.js (the `openboa` binary) with an esbuild bundle of
// src/cli/main.ts, its shared code and each command's code in
// dist/cli/chunks/. Why: a command then reads a few files instead of ~160
// modules (zod alone is ~95), which is most of a cold start's cost.
// Each command stays its own chunk, imported only when it runs, as in src.
//
// node-pty is native and @anthropic-ai/sdk is large and loaded only by a run
// that calls the model: both stay outside, imported from node_modules.
// The rest of dist/ (the library's entry, dist/index.js) is tsc's, unchanged.
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * zod's \`z\` namespace carries \`z.locales\`: its error messages in 50 languages,
 * about half of what zod puts in the bundle and all of it compiled on every
 * start. openboa uses zod's default (English) messages only, which zod
 * configures from locales/en.js itself; \`z.locales\` is left holding \`en\`.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-en' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: "export { default as en } from './en.js';\n", resolveDir: path.dirname(args.path), loader: 'js' }));
  },
};

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
  external: ['node-pty', '@anthropic-ai/sdk'],
  // Bundled CommonJS packages (commander, proper-lockfile, ...) call require() for Node's own modules.
  banner: { js: "import { createRequire as __openboaCreateRequire } from 'node:module';\nconst require = __openboaCreateRequire(import.meta.url);" },
  plugins: [englishOnlyZod],
  logLevel: 'warning',
});
chmodSync(path.join(outdir, 'main.js'), 0o755);
