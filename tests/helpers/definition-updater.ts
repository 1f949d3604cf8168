/**
 * A second process for the definition store's concurrency test: `rounds`
 * times, retrieve the agent and update it from the version it read. Prints
 * `{won, lost}` (updates that took, and conflicts) as JSON.
 * Usage: node --import tsx definition-updater.ts <home> <agent> <rounds> <tag>
 */
import { Home } from '../../src/core/foundation/home.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { retrieveDefinition, updateDefinition } from '../../src/core/definitions/definition-store.js';

const [root, agent, rounds, tag] = process.argv.slice(2) as [string, string, string, string];
const rt = { home: new Home(root), deps: systemDeps() };
let won = 0;
let lost = 0;
for (let i = 0; i < Number(rounds); i++) {
  const s = await retrieveDefinition(rt, 'agent', agent);
  try {
    await updateDefinition(rt, 'agent', agent, { expectedVersion: s.version, edit: (doc) => doc.setIn(['system'], `${tag} ${i}`) });
    won++;
  } catch (e) {
    if (!(OpenboaError.is(e) && e.code === 'conflict')) throw e;
    lost++;
  }
}
process.stdout.write(JSON.stringify({ won, lost }));
