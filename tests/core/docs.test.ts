/** docs/format.md must keep describing what the schema module defines. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EVENT_TYPES, WAKE_RECORD_TYPES, BUILTIN_TOOL_NAMES, AgentDefinition, EnvironmentDefinition, Limits } from '../../src/core/schema/index.js';
import { REPO } from '../helpers/home.js';

const doc = fs.readFileSync(path.join(REPO, 'docs', 'format.md'), 'utf8');

test('docs/format.md names every event type and wake record', () => {
  const missing = [...EVENT_TYPES, ...WAKE_RECORD_TYPES].filter((t) => !doc.includes(`\`${t}\``));
  assert.deepEqual(missing, []);
});

test('docs/format.md names every agent and environment field and built-in tool', () => {
  const fields = [
    ...Object.keys(AgentDefinition.shape),
    ...Object.keys(Limits.in.shape).map((k) => `limits.${k}`),
    ...Object.keys(EnvironmentDefinition.shape),
    ...BUILTIN_TOOL_NAMES,
  ];
  const missing = fields.filter((f) => !doc.includes(`\`${f}\``) && !doc.includes(`\`${f}.`));
  assert.deepEqual(missing, []);
});
