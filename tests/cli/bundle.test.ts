/**
 * What a command of the built CLI loads before it runs (docs/benchmarks.md,
 * "A command loads what it uses"): the files its chunk imports statically,
 * from dist/cli (built by `npm test`'s pretest), and the sources they were
 * bundled from (their source maps). A dynamic import loads only when its code
 * runs, so it is not followed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';

const DIST = path.dirname(CLI);

/** The files `entry` (and main.js, which runs first) load before the command's code runs. */
function loaded(command: string): string[] {
  const chunks = path.join(DIST, 'chunks');
  const entry = fs.readdirSync(chunks).find((f) => f.startsWith(`${command}-`) && f.endsWith('.js'));
  assert.ok(entry, `no chunk for ${command} in ${chunks}`);
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^import\s+(?:[^'";]*?\s+from\s+)?"(\.[^"]+)"/gm)) walk(path.resolve(path.dirname(file), m[1] as string));
  };
  walk(CLI);
  walk(path.join(chunks, entry));
  return [...seen];
}

/** The source files bundled into `files`, as their source maps name them (node_modules/<package>/...). */
function sources(files: string[]): string[] {
  return files.flatMap((f) => {
    const map = `${f}.map`;
    return fs.existsSync(map) ? (JSON.parse(fs.readFileSync(map, 'utf8')) as { sources: string[] }).sources : [];
  });
}

const packages = (srcs: string[]) => new Set(srcs.flatMap((s) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s)?.[1] ?? []));

test("the daemon does not load the MCP SDK until a run has MCP servers", () => {
  const pkgs = packages(sources(loaded('daemon')));
  assert.ok(pkgs.has('p-queue'), 'the daemon chunk was found and read');
  assert.ok(!pkgs.has('@modelcontextprotocol/sdk'), 'the MCP SDK is loaded by McpHub.start');
  assert.ok(!pkgs.has('ajv'));
});

test("no command loads zod's message locales (zod is imported as a namespace)", () => {
  for (const command of ['send', 'daemon', 'status']) {
    const locales = sources(loaded(command)).filter((s) => s.includes('zod/v4/locales/') && !s.endsWith('/en.js') && !s.endsWith('/index.js'));
    assert.deepEqual(locales, [], command);
  }
});
