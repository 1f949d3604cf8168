/** Core errors say what is wrong in the core's words; the CLI alone names flags and commands. */
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

test('no message thrown or returned by src/core names a CLI flag or command', () => {
  const offenders: string[] = [];
  for (const f of sources(path.join(REPO, 'src', 'core'))) {
    const lines = fs.readFileSync(f, 'utf8').split('\n');
    lines.forEach((l, i) => {
      if (/^\s*(\*|\/\/)/.test(l)) return; // comments may explain
      // a line that makes an error, with a flag (--word) or an openboa command in it
      const makesError = /(invalidInput|invalidField|notFound|busy|new Error\(|fail\()/.test(l);
      if (makesError && (/--[a-z]{2,}/.test(l) || /openboa (confirm|tool-result|send|status|wake|daemon|schedule|session)\b/.test(l))) offenders.push(`${path.relative(REPO, f)}:${i + 1}`);
    });
  }
  assert.deepEqual(offenders, []);
});

test('no message src/core writes into a log, a result or a typed error names a CLI flag or command', () => {
  const offenders: string[] = [];
  for (const f of sources(path.join(REPO, 'src', 'core'))) {
    const lines = fs.readFileSync(f, 'utf8').split('\n');
    lines.forEach((l, i) => {
      if (/^\s*(\*|\/\/)/.test(l)) return;
      // a session.error or result message, or any OpenboaError (whatever helper makes it)
      const saysSomething = /(message:|new OpenboaError\(|unsupportedLogFormat\(|error\(run,)/.test(l);
      if (saysSomething && (/--[a-z]{2,}/.test(l) || /openboa (confirm|tool-result|send|status|wake|wakes|events|daemon|schedule|session|interrupt)\b/.test(l))) offenders.push(`${path.relative(REPO, f)}:${i + 1}`);
    });
  }
  assert.deepEqual(offenders, []);
});
