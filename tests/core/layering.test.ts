/**
 * STYLE point 1: src/core knows nothing of the daemon, the CLI or the HTTP
 * API (adapters over it), and only
 * src/cli touches process.exit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/home.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('src/core imports neither src/daemon, src/cli nor src/http', () => {
  const core = sources(path.join(REPO, 'src', 'core'));
  assert.ok(core.length > 5);
  const leaks = core.filter((f) => /from\s+['"](\.\.\/)+(cli|daemon|http)\//.test(fs.readFileSync(f, 'utf8')));
  assert.deepEqual(leaks.map((f) => path.relative(REPO, f)), []);
});

test('only src/cli calls process.exit', () => {
  const all = sources(path.join(REPO, 'src'));
  const offenders = all.filter((f) => !f.includes(`${path.sep}cli${path.sep}`) && /process\.exit\(/.test(fs.readFileSync(f, 'utf8')));
  assert.deepEqual(offenders.map((f) => path.relative(REPO, f)), []);
});

/**
 * The run's centre changes only by registrations (STYLE point 11): the
 * loop, the orchestration, the opening of a run, the conversation and the
 * fold import no capability's module. A capability plugs in through
 * defaultHooks()/defaultServices() (run/default-hooks.ts) and the event
 * kinds (kinds/index.ts).
 */
test('the centre files import no capability module (outcomes, compaction, delegation, memory, learnings, MCP, search, egress, telemetry)', () => {
  const centre = ['src/core/run/loop.ts', 'src/core/run/wake.ts', 'src/core/run/open-run.ts', 'src/core/run/conversation.ts', 'src/core/store/fold.ts'];
  const capability = [
    /outcome/,
    /grader/,
    /compact/,
    /context-prune/,
    /summarize/,
    /fit-opening/,
    /delegation/,
    /child-report/,
    /children-/,
    /tree-budget/,
    /relations-file/,
    /roster/,
    /session-tree/,
    /interrupt-from-above/,
    /spawn-limits/,
    /\/memory\//,
    /memory-run/,
    /learnings/,
    /\/mcp\//,
    /\/search\//,
    /\/egress\//,
    /heartbeat/,
    /\/telemetry\//,
    /opentelemetry/,
    /prom-client/,
  ];
  const offenders: string[] = [];
  for (const f of centre) {
    const text = fs.readFileSync(path.join(REPO, f), 'utf8');
    assert.ok(text.length > 0, f);
    for (const m of text.matchAll(/^import\s[^;]*?from\s+['"]([^'"]+)['"]/gms)) {
      const spec = m[1]!;
      if (capability.some((re) => re.test(spec))) offenders.push(`${f} imports ${spec}`);
    }
  }
  assert.deepEqual(offenders, []);
});

/**
 * Telemetry (docs/observability.md): the core depends on @opentelemetry/api
 * alone; the SDK, the exporter and prom-client are the daemon's, loaded only
 * when asked for.
 */
test('src/core imports no OpenTelemetry package but the API, and no prom-client', () => {
  const offenders = sources(path.join(REPO, 'src', 'core')).flatMap((f) => {
    const text = fs.readFileSync(f, 'utf8');
    return [...text.matchAll(/(?:from\s+|import\()\s*['"]((?:@opentelemetry\/[^'"]+)|prom-client)['"]/g)].map((m) => m[1]!).filter((spec) => spec !== '@opentelemetry/api').map((spec) => `${path.relative(REPO, f)} imports ${spec}`);
  });
  assert.deepEqual(offenders, []);
});

test('the daemon loads the trace SDK and exporter only by dynamic import (nothing is loaded while tracing is off)', () => {
  const offenders = sources(path.join(REPO, 'src')).flatMap((f) => {
    const text = fs.readFileSync(f, 'utf8');
    return [...text.matchAll(/^import\s[^;]*?from\s+['"](@opentelemetry\/(?!api['"])[^'"]+)['"]/gms)].filter((m) => !/^import\s+type\s/.test(m[0])).map((m) => `${path.relative(REPO, f)} imports ${m[1]} statically`);
  });
  assert.deepEqual(offenders, []);
});
