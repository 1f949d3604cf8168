import { PACKAGE } from './package-root.js';

/** The package version, from the installed package.json. */
export const VERSION: string = PACKAGE.version;
