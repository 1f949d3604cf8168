import { answerCustomTool } from '../../core/ops/session-ops.js';
import type { CliContext, CommandInput } from '../command.js';
import { textArgument } from '../stdin.js';

export async function run(ctx: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  ctx.store.require(args.id as string); // before waiting on stdin
  const text = await textArgument(args.text as string, rest, ctx.stdin);
  const e = answerCustomTool(ctx.store, args.id as string, args.custom_tool_use_event_id as string, text, flags.error === true);
  ctx.out.result({ id: e.id, type: e.type }, e.id);
}
