/**
 * Inputs of the built-in tools. Names and inputs follow Managed Agents'
 * `agent_toolset_20260401` (bash, read, write, edit, glob, grep, web_fetch) plus our own
 * managed tools. The JSON Schema the model sees is generated from these
 * schemas (z.toJSONSchema), so the two can never drift apart.
 */
import * as z from 'zod';
import { EscalateInput } from './guards.js';
import { LearnInput } from './learnings.js';
import { PromoteInput } from './versions.js';
import { ReadSessionInput, SearchSessionsInput } from './search.js';
import { ListSessionsInput, MessageParentInput, SendToSessionInput, SpawnSessionInput } from './roster.js';
import { refineRecurrence } from './recurrence.js';
import { Timestamp } from './common.js';

export const BashInput = z
  .strictObject({
    command: z.string().min(1).optional().describe('The command to run in the persistent bash shell (cd and export persist between calls).'),
    timeout_ms: z.number().int().positive().max(3_600_000).optional().describe('Kill the command after this many milliseconds (default: the environment\'s shell timeout).'),
    restart: z.boolean().optional().describe('Start a fresh shell (at /workspace) before running the command, or alone.'),
  })
  .refine((v) => v.command !== undefined || v.restart === true, { message: 'expected a command, or restart: true', path: ['command'] });

export const ReadInput = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file, absolute (/workspace/...) or relative to /workspace.'),
  view_range: z
    .tuple([z.number().int().min(1), z.number().int()])
    .optional()
    .describe('[start, end] line numbers, 1-based and inclusive; an end of 0 or less means the end of the file.'),
});

export const WriteInput = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to create or overwrite, inside /workspace.'),
  content: z.string().describe('The whole new content of the file.'),
});

export const EditInput = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to edit, inside /workspace.'),
  old_string: z.string().min(1).describe('Exact text to replace; must occur exactly once unless replace_all is true.'),
  new_string: z.string().describe('The replacement text.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence.'),
});

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('A glob such as **/*.ts, relative to path.'),
  path: z.string().optional().describe('Directory to search in (default /workspace).'),
});

export const GrepInput = z.strictObject({
  pattern: z.string().min(1).describe('A regular expression (JavaScript syntax).'),
  path: z.string().optional().describe('File or directory to search (default /workspace).'),
});

export const ScheduleWakeInput = z
  .strictObject({
    delay_seconds: z.number().positive().max(366 * 86_400).optional().describe('Come back after this many seconds (repeating: the first time).'),
    at: z.iso.datetime({ offset: true }).optional().describe('Come back at this time (ISO 8601 with offset; repeating: the first time).'),
    every: z
      .union([z.number(), z.string()])
      .optional()
      .describe('Repeat this far apart: "30m", "2h", "1d" or seconds (at least 60); first one interval from now.'),
    cron: z.string().optional().describe('Repeat on a 5-field cron expression, e.g. "0 9 * * 1-5", or @hourly, @daily, @weekly.'),
    timezone: z.string().optional().describe('IANA time zone of cron, e.g. Europe/Berlin; default UTC.'),
    reason: z.string().min(1).max(2000).describe('What to do on the revisit; it is shown to you then.'),
  })
  .superRefine((v, ctx) => {
    const recurring = v.every !== undefined || v.cron !== undefined;
    if (v.delay_seconds !== undefined && v.at !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['delay_seconds'], message: 'expected exactly one of delay_seconds or at, not both' });
    } else if (!recurring && v.delay_seconds === undefined && v.at === undefined) {
      ctx.addIssue({ code: 'custom', path: ['delay_seconds'], message: 'expected exactly one of delay_seconds or at (or every or cron, to come back again and again)' });
    }
    refineRecurrence(v, ctx);
  });

export const CancelWakeInput = z.strictObject({
  wake_id: z.string().min(1).describe('The id of a pending revisit (from list_wakes or schedule_wake).'),
});

export const ListWakesInput = z.strictObject({});

export const SkillInput = z.strictObject({
  name: z.string().min(1).describe('The skill to read, as listed in the system prompt.'),
});

export const WebFetchInput = z.strictObject({
  url: z.string().min(1).max(8192).describe('The http:// or https:// URL to fetch.'),
});

/**
 * The agent's plan (the `todo` tool, docs/runs.md "The plan"). Bounded so a
 * plan stays something a person reads at a glance and the tool's calls stay
 * small in the log and the conversation: 50 items of at most 500 characters
 * is a few pages, well past any plan worth keeping.
 */
export const MAX_TODO_ITEMS = 50;
export const MAX_TODO_CHARS = 500;
export const TODO_STATUSES = ['pending', 'in_progress', 'done'] as const;
export const TodoStatus = z.enum(TODO_STATUSES);
export type TodoStatus = z.infer<typeof TodoStatus>;

export const TodoItem = z.strictObject({
  content: z.string().trim().min(1).max(MAX_TODO_CHARS).describe('The step, in one line: what to do, not how it went.'),
  status: TodoStatus.describe('pending: not started; in_progress: being worked on now; done: finished.'),
});
export type TodoItem = z.infer<typeof TodoItem>;

/** The whole list, every call: the call replaces the plan. */
export const TodoInput = z.strictObject({
  items: z.array(TodoItem).max(MAX_TODO_ITEMS).describe(`The whole plan, in order (at most ${MAX_TODO_ITEMS} items); it replaces the previous one. An empty list clears it.`),
});
export type TodoInput = z.infer<typeof TodoInput>;

/**
 * runtime/plan.json: the plan of the session's last successful `todo` call
 * (its items as the call gave them, trimmed) and when that call's result was
 * logged. A cache derived from the log (run/plan-file.ts).
 */
export const PlanFile = z.strictObject({
  items: z.array(TodoItem).max(MAX_TODO_ITEMS),
  updated_at: Timestamp,
});
export type PlanFile = z.infer<typeof PlanFile>;

export const TOOL_INPUTS = {
  bash: BashInput,
  read: ReadInput,
  write: WriteInput,
  edit: EditInput,
  glob: GlobInput,
  grep: GrepInput,
  schedule_wake: ScheduleWakeInput,
  cancel_wake: CancelWakeInput,
  list_wakes: ListWakesInput,
  skill: SkillInput,
  escalate: EscalateInput,
  spawn_session: SpawnSessionInput,
  send_to_session: SendToSessionInput,
  list_sessions: ListSessionsInput,
  message_parent: MessageParentInput,
  learn: LearnInput,
  promote: PromoteInput,
  search_sessions: SearchSessionsInput,
  read_session: ReadSessionInput,
  web_fetch: WebFetchInput,
  todo: TodoInput,
} as const;
