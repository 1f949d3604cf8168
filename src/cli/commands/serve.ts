import { DEFAULT_LISTEN } from '../../http/listen-address.js';
import { ListenRefused, openApiListener } from '../../http/api-listener.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';

/** `openboa serve`: the HTTP API of the home until SIGINT/SIGTERM (runs are the daemon's: run one beside it, or use daemon --listen). */
export async function run(ctx: CliContext, { flags }: CommandInput): Promise<number | void> {
  const listen = typeof flags.listen === 'string' ? flags.listen : DEFAULT_LISTEN;
  const write = (line: string) => ctx.out.write(line);
  let server;
  try {
    server = await openApiListener({ home: ctx.home, store: ctx.store, deps: ctx.deps }, listen, { write });
  } catch (e) {
    if (e instanceof ListenRefused) throw new UsageError(e.message);
    throw e;
  }
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  write('openboa serve: stopped');
}
