/**
 * An environment's `packages` (Managed Agents' name): npm and apt packages
 * installed once per environment version into a cache the sandbox mounts
 * read-only (docs/sandbox.md, "Packages"). Each entry becomes one argument
 * of npm or apt-get, so the patterns admit no option (nothing starts with
 * `-`), no whitespace and nothing a shell would read: a name, a version or
 * range, or (npm) a local tarball.
 */
import * as z from 'zod';

/**
 * An npm package from the registry: `name`, `@scope/name`, each with an
 * optional `@version`, `@range` or `@tag` (`cowsay@1.6.0`, `typescript@^5.4`,
 * `@scope/tool@latest`). Names as npm allows them (lower case, starting
 * with a letter or digit); a version of letters, digits and `.^~*+-_x`.
 */
export const NPM_REGISTRY_SPEC = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(?:@[A-Za-z0-9.^~*+_-]+)?$/;

/**
 * A local tarball: `file:` and a path to a `.tgz` (absolute, or relative to
 * the home). The path may hold anything but a NUL or a line break.
 */
export const NPM_FILE_SPEC = /^file:[^\0\r\n]+\.tgz$/;

/** A Debian package: `name` or `name=version` (policy's characters for both). */
export const APT_SPEC = /^[a-z0-9][a-z0-9+.-]+(?:=[A-Za-z0-9.+~:-]+)?$/;

export const NpmPackage = z
  .string()
  .max(1000)
  .refine((s) => NPM_REGISTRY_SPEC.test(s) || NPM_FILE_SPEC.test(s), {
    message: 'expected an npm package as name, name@version or @scope/name@version (e.g. "cowsay@1.6.0"), or a local tarball as file:<path>.tgz',
  });

export const AptPackage = z.string().max(200).regex(APT_SPEC, 'expected a Debian package as name or name=version (e.g. "jq" or "jq=1.6-2.1")');

export const EnvironmentPackages = z.strictObject({
  npm: z.array(NpmPackage).max(200).default([]),
  apt: z.array(AptPackage).max(200).default([]),
});
export type EnvironmentPackages = z.infer<typeof EnvironmentPackages>;

/**
 * `manifest.json` of a built package cache (`.openboa/env-cache/<env>/<hash>/`),
 * written into the temp folder before it is renamed into place: a cache
 * folder exists only with its manifest. It says what was built, for
 * people (`openboa env build`) and for the run's runtime/packages.json.
 */
export const PackagesManifest = z.strictObject({
  format: z.literal(1),
  environment_id: z.string(),
  hash: z.string(),
  npm: z.array(z.string()),
  apt: z.array(z.string()),
  built_at: z.string(),
});
export type PackagesManifest = z.infer<typeof PackagesManifest>;
