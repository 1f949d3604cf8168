/** The package's one entry point: a program embedding openboa imports it by name, not by deep paths. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempHome } from '../helpers/home.js';

test("'openboa' gives the store, wake and the daemon, and a session runs through them", async (t) => {
  // By name, the package resolves to its built entry point (package.json "exports"); the test drives the source of it.
  assert.match(import.meta.resolve('openboa'), /\/dist\/index\.js$/);
  const api = await import('../../src/index.js');
  for (const name of ['Home', 'SessionStore', 'systemDeps', 'createSession', 'sendMessage', 'wake', 'Daemon', 'OpenboaError', 'EVENT_TYPES']) assert.ok(name in api, name);
  const h = tempHome(t);
  const home = new api.Home(h.root);
  const deps = api.systemDeps({});
  const store = new api.SessionStore(home, deps);
  const s = api.createSession(store, { agent: 'demo' });
  api.sendMessage(store, s.id, 'hello');
  const r = await api.wake({ home, store, deps }, s.id);
  assert.equal(r.outcome, 'executed');
  assert.equal(r.processed_event_ids.length, 1);
});
