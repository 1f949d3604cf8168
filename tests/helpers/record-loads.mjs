// `node --import <this file>`: appends the URL of every module the process loads, one a line, to the file
// named by $OPENBOA_TEST_LOADS (tests/cli/send-lean.test.ts reads which bundled files a command loaded).
import { register } from 'node:module';

register(new URL('./record-loads-hooks.mjs', import.meta.url));
