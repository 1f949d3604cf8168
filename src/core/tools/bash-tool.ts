/**
 * bash: one persistent shell per session (SPEC §6). The command runs in the
 * sandbox; a timeout or an interrupt kills it (and, if it will not die, the
 * whole sandbox). The exit code, the cwd and the output are reported; the
 * output is redacted before the model or the log sees it.
 */
import { BashInput } from '../schema/index.js';
import { isFailure } from '../sandbox/sandbox.js';
import { fail, ok, type Tool } from './tool.js';

export const bashTool: Tool<typeof BashInput> = {
  name: 'bash',
  description:
    'Run a command in your persistent bash shell inside the sandbox. The working directory and exported variables persist between calls. stdin is /dev/null; long output is saved to a file.',
  input: BashInput,
  async run(input, ctx) {
    if (input.restart) {
      const failed = await ctx.sandbox.restart({ signal: ctx.signal });
      if (failed) return fail(`could not start the shell: ${failed.error}`);
      if (input.command === undefined) return ok('started a fresh shell in the workspace');
    }
    const command = input.command as string;
    const timeoutMs = input.timeout_ms ?? ctx.shellTimeoutMs;
    const r = await ctx.sandbox.exec(command, { timeoutMs, signal: ctx.signal });
    if (isFailure(r)) return fail(`could not start the shell: ${r.error}`);
    const out = ctx.redactor.text(r.output);
    if (r.interrupted) return fail(`${out}${out ? '\n' : ''}[interrupted: the command was killed]`);
    if (r.timedOut) return fail(`${out}${out ? '\n' : ''}[timed out after ${timeoutMs} ms: the command was killed]`);
    if (r.shellDied) return fail(`${out}${out ? '\n' : ''}[the shell exited${r.exitCode !== null ? ` with code ${r.exitCode}` : ''}; the next command starts a new shell in ${r.cwd}]`);
    const tail = r.exitCode === 0 ? '' : `${out ? '\n' : ''}[exit code ${r.exitCode}]`;
    return r.exitCode === 0 ? ok(out || '(no output)') : fail(`${out}${tail}`);
  },
};
