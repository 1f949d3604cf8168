// The module loader's hook for record-loads.mjs (it runs on the loader's own thread).
import fs from 'node:fs';

export async function load(url, context, next) {
  if (process.env.OPENBOA_TEST_LOADS) fs.appendFileSync(process.env.OPENBOA_TEST_LOADS, `${url}\n`);
  return next(url, context);
}
