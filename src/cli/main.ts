#!/usr/bin/env node
/**
 * Entry point of the `openboa` command. The only place that sets the process
 * exit code; SIGINT/SIGTERM abort long-running commands, a second signal
 * exits at once.
 */
import { leanSendForm } from './send-lean-form.js';

// A reader that went away (a closed pipe) must not crash a daemon that is writing its log lines.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

const controller = new AbortController();
let signals = 0;
const onSignal = (sig: NodeJS.Signals) => {
  signals += 1;
  if (signals > 1) process.exit(sig === 'SIGINT' ? 130 : 143);
  controller.abort(new Error(`received ${sig}`));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const argv = process.argv.slice(2);
const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
// A one-shot send, the commonest command a script runs, loads neither the parser nor the schema (send-lean.ts).
const lean = leanSendForm(argv, process.env);
const code = lean ? await (await import('./send-lean.js')).runLeanSend(lean, io) : await (await import('./run.js')).runCli(argv, { ...io, signal: controller.signal });
process.exitCode = code;
// Long-running commands may leave watchers or timers behind on abort; do not hang on them.
if (controller.signal.aborted) setTimeout(() => process.exit(code), 50).unref();
