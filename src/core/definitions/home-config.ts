/**
 * `<home>/openboa.yaml`, the home's own settings (schema/home-config.ts;
 * docs/webhooks.md). Absent: the defaults. Every read validates; an error
 * names the file, the line and the field, like a definition's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HomeConfig } from '../schema/index.js';
import type { Home } from '../foundation/home.js';
import { parseYaml } from './definitions.js';

export const HOME_CONFIG_FILE = 'openboa.yaml';

export function loadHomeConfig(home: Home): HomeConfig {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home.root, HOME_CONFIG_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return HomeConfig.parse({});
    throw e;
  }
  return parseYaml(text, HomeConfig, HOME_CONFIG_FILE);
}
