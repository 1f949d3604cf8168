/**
 * The installed openboa package's own folder, which holds package.json and
 * the bundled agents/ and environments/. Found by walking up from this
 * module, because this module is at a different depth in each layout: under
 * src/cli (tsx), dist/cli (tsc) or dist/cli/chunks (the bundled binary).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface PackageInfo {
  root: string;
  version: string;
}

/** The nearest folder at or above `from` whose package.json is named openboa. Throws when there is none. */
export function findPackage(from: string): PackageInfo {
  for (let dir = from; ; dir = path.dirname(dir)) {
    let text: string | undefined;
    try {
      text = fs.readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      // none here: look one level up
    }
    if (text !== undefined) {
      const pkg: unknown = JSON.parse(text);
      if (typeof pkg === 'object' && pkg !== null && 'name' in pkg && pkg.name === 'openboa' && 'version' in pkg && typeof pkg.version === 'string') {
        return { root: dir, version: pkg.version };
      }
    }
    if (path.dirname(dir) === dir) throw new Error(`no openboa package.json at or above ${from}`);
  }
}

/** This installation's package, looked up once. */
export const PACKAGE: PackageInfo = findPackage(import.meta.dirname);
