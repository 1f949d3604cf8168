/**
 * The hosts `allow_package_managers: true` adds to an environment's allow
 * list (ports 80 and 443), listed in docs/sandbox.md: the npm registry and
 * the Debian and Ubuntu archives a sources.list names by default.
 */
export const PACKAGE_MANAGER_HOSTS: readonly string[] = [
  // npm
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  // Debian
  'deb.debian.org',
  'security.debian.org',
  'ftp.debian.org',
  'cdn-fastly.deb.debian.org',
  // Ubuntu
  'archive.ubuntu.com',
  '*.archive.ubuntu.com',
  'security.ubuntu.com',
  'ports.ubuntu.com',
];
