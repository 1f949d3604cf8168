import chokidar from 'chokidar';
import { describeEvent, viewEvents, type EventView } from '../../core/event-view.js';
import { UsageError, type CliContext, type CommandSpec } from '../command.js';
import { redactFor } from '../session-redactor.js';

function print(ctx: CliContext, v: EventView) {
  if ('invalid' in v) {
    ctx.out.result(v, `${String(v.line).padStart(5)}  ${'INVALID'.padEnd(24)}  ${v.invalid.message}`);
    return;
  }
  const e = v.event;
  const pending = e.type.startsWith('user.') && v.event.processed_at === null ? ' (pending)' : '';
  ctx.out.result(
    v,
    `${String(v.line).padStart(5)}  ${e.created_at}  ${e.type.padEnd(26)}  ${e.id}  ${describeEvent(e)}${pending}${v.error ? `  [rejected: ${v.error}]` : ''}`,
  );
}

export const events: CommandSpec = {
  path: ['events'],
  summary: "read a session's log (normalised; --json prints one event per line)",
  args: [{ name: 'id', required: true, description: 'the session id' }],
  options: {
    follow: { type: 'boolean', short: 'f', description: 'keep printing lines as they are appended (until Ctrl-C)' },
    limit: { type: 'string', value: 'N', description: 'only the last N lines' },
  },
  async run(ctx, { args, flags }) {
    const id = args.id as string;
    let limit = Infinity;
    if (flags.limit !== undefined) {
      limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 0) throw new UsageError(`--limit "${String(flags.limit)}" is not a whole number`);
    }
    const p = ctx.store.require(id);
    redactFor(ctx, id);
    const first = ctx.store.readEvents(id);
    const all = viewEvents(first.lines);
    for (const v of limit === Infinity ? all : all.slice(Math.max(0, all.length - limit))) print(ctx, v);
    if (flags.follow !== true) return;

    let cursor = first.cursor;
    const drain = () => {
      const r = ctx.store.readEvents(id, cursor);
      cursor = r.cursor;
      for (const v of viewEvents(r.lines)) print(ctx, v);
    };
    // The watcher is a hint; a slow poll catches what it misses.
    const watcher = chokidar.watch(p.events, { ignoreInitial: true, persistent: true });
    watcher.on('change', drain).on('add', drain);
    const poll = setInterval(drain, 1000);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    clearInterval(poll);
    await watcher.close();
  },
};
