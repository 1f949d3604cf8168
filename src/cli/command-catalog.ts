/**
 * Every command, in the order `openboa --help` lists them: the words that
 * select it, its arguments, options and help, and where its code is. The code
 * (src/cli/commands/<name>.ts, exporting `run`) is imported only when the
 * command runs, so `--help`, `--version` and a mistyped command load none of
 * it, and a command loads only what it uses.
 */
import type { CommandSpec, OptionSpec } from './command.js';
import { SESSION_STATUSES } from './session-statuses.js';

/** The options of `daemon` and `start` (which runs the daemon). */
const DAEMON_OPTIONS: Record<string, OptionSpec> = {
  concurrency: { type: 'string', value: 'N', description: 'runs at once (default 4)' },
  poll: { type: 'boolean', description: "poll the filesystem instead of native events (network filesystems): the home's doorbell every 0.1 s, stats of every session every 2 s or more" },
  'poll-interval': { type: 'string', value: 'SECONDS', description: 'with --poll: how often every session is stat\'ed (default 2; longer by itself when that would cost over 2% of a core)' },
  shard: { type: 'string', value: 'I/N', description: "watch and sweep only share I of N of the sessions (several daemons on one home); others' stray work is still taken" },
  sweep: { type: 'string', value: 'SECONDS', description: 'how often to re-check every session for missed changes (default 30)' },
  // Spelled out, not imported: the catalog loads nothing from core (the policies and default are durability.ts's; a test holds them equal).
  fsync: { type: 'string', value: 'always|run|never', description: "when runs' writes are synced to disk: always, run (each run's end, and every person's event), never (default run)" },
  'allow-multiple': { type: 'boolean', description: 'run even if another daemon runs on this home (several hosts sharing one home)' },
  init: { type: 'boolean', description: 'make the folder a home first (as openboa init does) when it is not one' },
  listen: { type: 'string', value: 'HOST:PORT', description: 'also serve the HTTP API here, in this process (as openboa serve does; docs/http.md)' },
  'metrics-listen': { type: 'string', value: 'HOST:PORT', description: 'serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464); traces go out when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/observability.md)' },
};

export const COMMANDS: CommandSpec[] = [
  {
    path: ['init'],
    summary: 'make a folder a working home: the bundled demo and claude agents, environments/local.yaml, sessions/',
    args: [{ name: 'dir', required: false, description: 'the folder (created if missing); default: the home (--home, $OPENBOA_HOME, else the current directory)' }],
    details: 'Existing files are never overwritten: they are kept as they are and listed. Running it again on a home only adds what is missing.',
    home: 'any',
    load: () => import('./commands/init.js'),
  },
  {
    path: ['doctor'],
    summary: 'check that sessions can run here: the sandbox, the home, the definitions, the model key, the daemon',
    details: 'Exit 0 when everything needed is usable, 1 when a check failed. --json prints {"home","ok","checks":[{"name","status","message"}]}.',
    home: 'any',
    load: () => import('./commands/doctor.js'),
  },
  {
    path: ['start'],
    summary: 'the first minute: create a demo session if there is none, then run the daemon',
    options: DAEMON_OPTIONS,
    details: "This is what `npm start` runs on the repository's own home. The demo agent needs no API key and no network. A folder that is not a home is refused unless --init.",
    home: 'any',
    longLived: true,
    load: () => import('./commands/start.js'),
  },
  {
    path: ['daemon'],
    summary: 'the worker: watch sessions, wake them, repeat (Ctrl-C stops it cleanly)',
    options: DAEMON_OPTIONS,
    details: 'One line per run start and end on stdout (JSON lines with --json). A second Ctrl-C exits at once. A folder that is not a home is refused (exit 3) unless --init makes it one.',
    home: 'any',
    longLived: true,
    load: () => import('./commands/daemon.js'),
  },
  {
    path: ['serve'],
    summary: 'the HTTP API of the home (Managed Agents shapes, for the official SDK) until Ctrl-C',
    options: { listen: { type: 'string', value: 'HOST:PORT', description: 'where to listen (default 127.0.0.1:7410)' } },
    details:
      'Every request needs the key: OPENBOA_API_KEY, else the one made on first start into <home>/.openboa/api-key (mode 0600, printed once). An address beyond loopback is refused unless OPENBOA_API_KEY is set. Runs are the daemon\'s: run one beside it, or serve from the daemon itself with openboa daemon --listen. See docs/http.md.',
    load: () => import('./commands/serve.js'),
  },
  {
    path: ['env', 'build'],
    summary: "install an environment's packages (npm, apt) into its cache, once per version of the lists",
    args: [{ name: 'name', required: true, description: 'the environment (environments/<name>.yaml)' }],
    options: { rebuild: { type: 'boolean', description: 'build again even when the cache of this version is built (a range or an unpinned apt package then takes what is newest); a running session keeps the build it has' } },
    details:
      "The cache is <home>/.openboa/env-cache/<name>/<hash> (a link to its current build in <hash>.builds/), the install's log <hash>.log beside it; a run of the environment builds it itself when it is missing. Another build of the same cache (a daemon's run, another command) is waited for. Each time, older builds that no running session has are removed. Exit 0 when built or already built, 1 when the install failed (the log says why), 2 when the environment does not load. --json prints {environment_id,packages,hash,build,built,cache,log,built_at,removed_builds}.",
    load: () => import('./commands/env-build.js'),
  },
  {
    path: ['wake'],
    summary: 'run a session once now, in this process, and print what happened',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: { force: { type: 'boolean', description: 'run it here even though a daemon runs on this home' } },
    details:
      "Refused (exit 4) while a daemon runs on the home, unless --force: the daemon runs the session itself, with its own environment (API keys, secrets), and a run in this shell's environment could fail where the daemon's would not. Exit 0 when the run executed or was skipped (nothing to do), 1 when the run failed (its error is printed), 2 when the agent or environment definition does not load (the message names the file and field), 4 when another process holds the session or a daemon runs.",
    load: () => import('./commands/wake.js'),
  },
  {
    path: ['agents'],
    summary: "list the home's agents (provider, model) and environments (sandbox, network)",
    details: 'A definition that does not load is listed with its error. --json prints {"agents":[...],"environments":[...]}.',
    load: () => import('./commands/agents.js'),
  },
  {
    path: ['session', 'create'],
    summary: 'create a session and print its id',
    options: {
      agent: { type: 'string', value: 'A', description: 'the agent (agents/<A>/agent.yaml); required; openboa agents lists them' },
      env: { type: 'string', value: 'E', description: "the environment (environments/<E>.yaml); default: the agent's" },
      title: { type: 'string', value: 'T', description: 'a title for people' },
    },
    load: () => import('./commands/session-create.js'),
  },
  {
    path: ['session', 'update'],
    summary: "change a session's own definition (from its next run): title, token budget",
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: {
      title: { type: 'string', value: 'T', description: 'a new title' },
      budget: { type: 'string', value: 'N|none', description: 'session_token_budget for this session: tokens, or none for no cap' },
    },
    load: () => import('./commands/session-update.js'),
  },
  {
    path: ['sessions'],
    summary: 'list sessions, newest first, with status, stop reason and next due wake',
    options: {
      status: { type: 'string', value: 'S', description: `only sessions in this status: ${SESSION_STATUSES.join(', ')}` },
      limit: { type: 'string', value: 'N', description: 'at most N sessions (the newest)' },
      archived: { type: 'boolean', description: 'list archived sessions too (hidden by default)' },
    },
    load: () => import('./commands/sessions.js'),
  },
  {
    path: ['status'],
    summary: 'show a session: status, lease holder, pending work, next wake',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    load: () => import('./commands/status.js'),
  },
  {
    path: ['send'],
    rest: true,
    summary: 'append a user.message to a session',
    args: [
      { name: 'id', required: true, description: 'the session id' },
      { name: 'text', required: false, description: 'the message; "-" reads it from stdin' },
    ],
    options: {
      lines: { type: 'boolean', description: 'read stdin and send each non-empty line as its own message' },
      wait: { type: 'boolean', description: "wait for the agent's turn: print its replies (its tool calls on stderr) and what it waits for; exit when it is idle" },
      shared: { type: 'boolean', description: "the home is shared between hosts: write through the session's inbox/ (a rename), never an append (default: judged from openboa.yaml's shared: and the file system)" },
    },
    details:
      'The message is always appended (on a shared home, dropped into the session\'s inbox/, and in the log once a run takes it in). When no daemon runs on the home, or the session waits on answers or is terminated, a note on stderr says so (--json: "notes" in the result). With --wait, the daemon runs the session if one runs on the home, else this process does; exit 0 when the turn ended (idle, or waiting on a person), 1 when it did not (a failed run backing off, a paused session).',
    load: () => import('./commands/send.js'),
  },
  {
    path: ['chat'],
    summary: "talk with a session: each line you type is a message; the agent's replies, its tool calls, and its questions answered inline",
    args: [{ name: 'id', required: true, description: 'the session id' }],
    details:
      'A loop of send --wait with line editing. A tool use that asks for confirmation is answered at the prompt (y, n, or a message to deny with), a custom tool with its result, an escalation with an option number or your own words. Runs the session in this process when no daemon runs on the home. Ctrl-D or /quit ends it; the session keeps its history.',
    load: () => import('./commands/chat.js'),
  },
  {
    path: ['outcome'],
    rest: true,
    summary: 'give a session an outcome: what "done" means, graded after each turn until met (user.define_outcome)',
    args: [
      { name: 'id', required: true, description: 'the session id' },
      { name: 'description', required: true, description: 'what to produce (several words are joined)' },
    ],
    options: {
      rubric: { type: 'string', value: 'FILE|-', description: 'the rubric a grader model checks the work against (markdown): a file, or - for stdin' },
      check: { type: 'string', value: 'CMD|auto', description: 'a shell command run in the sandbox whose exit 0 means met; auto runs /workspace/check.sh when it exists' },
      // Spelled out, not imported: the catalog loads nothing from core (MAX_ITERATIONS and the default are outcomes.ts's; a test holds them equal).
      'max-iterations': { type: 'string', value: 'N', description: 'evaluations at most, 1 to 20 (default 3)' },
      file: { type: 'string', value: 'PATH', repeatable: true, description: 'a workspace file the rubric grader reads besides the final message (repeat for more, at most 20)' },
    },
    details:
      'Prints the event id and the outcome id. The outcome is always appended; when no daemon runs on the home, or the session waits on answers or is terminated, a note on stderr says so (--json: {"id","outcome_id","type","created_at","notes"}). openboa status shows where its evaluations stand.',
    load: () => import('./commands/outcome.js'),
  },
  {
    path: ['events'],
    summary: "read a session's log (normalised; --json prints one event per line)",
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: {
      follow: { type: 'boolean', short: 'f', description: 'keep printing lines as they are appended (until Ctrl-C)' },
      limit: { type: 'string', value: 'N', description: 'only the last N lines' },
      full: { type: 'boolean', description: 'print every message whole (the default view clips each line to the terminal width)' },
    },
    load: () => import('./commands/events.js'),
  },
  {
    path: ['confirm'],
    summary: 'answer a tool use that asks for confirmation (always_ask): allow or deny',
    args: [
      { name: 'id', required: true, description: 'the session id' },
      { name: 'tool_use_event_id', required: true, description: 'the agent.tool_use event id (openboa status lists them)' },
    ],
    options: {
      allow: { type: 'boolean', description: 'run the tool with the input the model gave' },
      deny: { type: 'boolean', description: 'do not run it; the model is told' },
      message: { type: 'string', value: 'M', description: 'with --deny: why, for the model' },
    },
    load: () => import('./commands/confirm.js'),
  },
  {
    path: ['tool-result'],
    rest: true,
    summary: 'answer a custom tool use with its result',
    args: [
      { name: 'id', required: true, description: 'the session id' },
      { name: 'custom_tool_use_event_id', required: true, description: 'the agent.custom_tool_use event id (openboa status lists them)' },
      { name: 'text', required: true, description: 'the result for the model; "-" reads it from stdin' },
    ],
    options: {
      error: { type: 'boolean', description: 'the tool failed; the text says how' },
    },
    load: () => import('./commands/tool-result.js'),
  },
  {
    path: ['resolve'],
    summary: 'answer an escalation (the escalate tool, or a stale loop): pick one of its options, or say what to do',
    args: [
      { name: 'id', required: true, description: 'the session id' },
      { name: 'event_id', required: true, description: 'the escalation: its agent.custom_tool_use event id (openboa status lists it with its options)' },
    ],
    options: {
      pick: { type: 'string', value: 'N', description: 'the option chosen, 1-based; the agent is told its text' },
      message: { type: 'string', value: 'M', description: 'your own answer instead, for the agent' },
    },
    load: () => import('./commands/resolve.js'),
  },
  {
    path: ['interrupt'],
    summary: 'stop a session: abort its run, close what it waits on, cancel its revisits',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: { reason: { type: 'string', value: 'R', description: 'why (kept in the log)' } },
    load: () => import('./commands/interrupt.js'),
  },
  {
    path: ['pause'],
    summary: 'hold a session: no run starts until resume (a run in progress stops at its next step)',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: { reason: { type: 'string', value: 'R', description: 'why (kept in the log, shown by status)' } },
    details: 'Appends a user.pause. Messages, answers and revisits wait; an interrupt is still honoured. Pausing a paused session changes nothing (a note says so).',
    load: () => import('./commands/pause.js'),
  },
  {
    path: ['archive'],
    summary: 'archive a session: kept, hidden from sessions, never woken (--undo brings it back)',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: { undo: { type: 'boolean', description: 'unarchive it: back in listings, woken again' } },
    details: 'Appends session.updated {archived: true}. Whatever is appended to an archived session stays in its log and is taken in only once it is unarchived. A running session is refused (exit 4): interrupt it first.',
    load: () => import('./commands/archive.js'),
  },
  {
    path: ['delete'],
    summary: 'delete a session and its workspace for good (asks first, unless --yes)',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: { yes: { type: 'boolean', description: 'do not ask' } },
    details: 'Refused while a run holds the session (exit 4). Without --yes it asks on the terminal, and is refused when there is none. Its child sessions are kept.',
    load: () => import('./commands/delete.js'),
  },
  {
    path: ['resume'],
    summary: 'let a paused session go again: what waited is taken in by one run',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    details: 'Appends a user.resume. Messages and revisits that came due while paused are taken in together by the next run. Resuming a session that is not paused changes nothing (a note says so).',
    load: () => import('./commands/resume.js'),
  },
  {
    path: ['schedule'],
    summary: 'schedule a revisit of a session, once or recurring (append a wake.scheduled), or cancel one',
    args: [{ name: 'id', required: true, description: 'the session id' }],
    options: {
      in: { type: 'string', value: 'DURATION', description: 'from now: 90s, 10m, 1h30m, 2d (a bare number is seconds); with --every/--cron, the first firing' },
      at: { type: 'string', value: 'ISO', description: 'at a time, e.g. 2026-11-21T10:05:00Z; with --every/--cron, the first firing' },
      every: { type: 'string', value: 'DURATION', description: 'recurring: this far apart (at least 1m); the first firing one interval from now unless --in/--at' },
      cron: { type: 'string', value: 'EXPR', description: 'recurring: on a cron expression of 5 fields, e.g. "0 9 * * 1-5", or @hourly, @daily, ...' },
      tz: { type: 'string', value: 'ZONE', description: "the IANA time zone of --cron, e.g. Europe/Berlin (default: this machine's, written into the line)" },
      reason: { type: 'string', value: 'R', description: 'what the revisit is for (shown to the agent)' },
      cancel: { type: 'string', value: 'WAKE_ID', description: 'cancel this pending revisit instead (a recurring one stops for good)' },
    },
    details:
      'A recurring revisit fires once per interval or occurrence; firings missed while nothing ran (no daemon, a busy or paused session) run once, not once each. `openboa wakes ID` shows its next firing. --json prints the wake.scheduled record (with `recurrence`), or {wake_id, cancelled} for --cancel.',
    load: () => import('./commands/schedule.js'),
  },
  {
    path: ['usage'],
    summary: 'tokens and cost (USD): of a session, of a session and its descendants (--tree), or of the whole home by agent',
    args: [{ name: 'id', required: false, description: 'the session id; default: every session of the home, summed by agent' }],
    options: {
      tree: { type: 'boolean', description: 'the session and each of its descendants, nested' },
      by: { type: 'string', value: 'KEYS', description: 'a breakdown by agent, model and/or day (comma-separated; UTC days), of the home or of the session and its descendants' },
      since: { type: 'string', value: 'WHEN', description: 'the breakdown counts requests from then on: a date (2026-11-01, UTC), an ISO time, or a duration back (7d, 12h)' },
      csv: { type: 'boolean', description: 'the breakdown as CSV' },
    },
    details:
      'Costs are recorded with each request at its model\'s price (agent.yaml pricing, else the default table); a child counts in its parent\'s tree as of its latest report. --json prints {session_id,agent_id,usage,tree_usage,...}; with --tree {usage,tree_usage,children:[...]} nested; with no id {agents:[{agent_id,sessions,usage}],total,unreadable}. --by, --since or --csv print a breakdown by agent, model and day instead (--json: {scope,by,since,rows:[{agent_id,model,day,usage,unpriced_requests}],total,unpriced,unreadable}); a model with no price is named and its cost left unknown, never counted as $0.',
    load: () => import('./commands/usage.js'),
  },
  {
    path: ['learnings'],
    summary: "an agent's learnings (agents/<A>/learnings.jsonl) merged: kind, times learned, last, active or retired; --retire ID retires one",
    args: [{ name: 'agent', required: true, description: 'the agent id' }],
    options: { retire: { type: 'string', value: 'ID', description: 'retire this learning (an appended line, never an edit): it leaves LEARNINGS.md and later system prompts' } },
    details: '--json prints {agent_id,learnings:[{id,ids,kind,text,tags,count,first_at,last_at,sessions,retired}],skipped:[{file,line,problem}]}; with --retire {agent_id,retired,already}.',
    load: () => import('./commands/learnings.js'),
  },
  {
    path: ['wakes'],
    summary: "a session's wake queue folded: pending, due, consumed, cancelled; a recurring revisit with its rule and next firing",
    args: [{ name: 'id', required: true, description: 'the session id' }],
    load: () => import('./commands/wakes.js'),
  },
  {
    path: ['memory'],
    summary: "an agent's memory directory (agents/<A>/memory/) and its versions: list, log [path], show <path> [--at SHA], restore <path> <sha>",
    args: [
      { name: 'agent', required: true, description: 'the agent id' },
      { name: 'action', required: false, description: 'log, show or restore; none lists the documents and their latest versions' },
      { name: 'path', required: false, description: 'a document, relative to memory/ (MEMORY.md, notes/a.md; /memory/... too)' },
      { name: 'sha', required: false, description: 'restore: the sha256 (or its first 6+ hex digits) of the version to write back' },
    ],
    options: { at: { type: 'string', value: 'SHA', description: 'show: the version with this sha256 (or prefix) instead of the latest' } },
    details:
      'Every change a run makes to /memory is a line of agents/<A>/memory.log.jsonl (path, sha256, op, session_id, wake_id, at), its content in memory.versions/. restore writes the old content back atomically and logs op restore with session_id null. --json prints {agent_id,documents:[line]}; log {agent_id,path,versions:[line]}; show {agent_id,path,version,content}; restore {agent_id,restored}.',
    load: () => import('./commands/memory.js'),
  },
  {
    path: ['search'],
    rest: true,
    summary: "search every session's messages, tool results, outcome explanations and learnings (BM25); candidates, not truth",
    args: [{ name: 'query', required: true, description: 'words to look for (taken literally: quotes and operators are text)' }],
    options: {
      agent: { type: 'string', value: 'A', description: "only agent A's sessions and learnings (default: every agent's)" },
      limit: { type: 'string', value: 'N', description: 'at most N candidates (default 10, at most 50)' },
    },
    details:
      'Brings the index (<home>/.openboa/search.sqlite) up to date first, then prints each candidate: session, event, kind, time, score, title and a snippet. --json prints {query,agent_id,hits:[{session_id,event_id,agent_id,kind,title,snippet,score,created_at}],skipped:[{source,message}]}.',
    load: () => import('./commands/search.js'),
  },
  {
    path: ['reindex'],
    summary: 'rebuild the search index (<home>/.openboa/search.sqlite) from the logs and learnings',
    details: 'The index is derived: rebuilding loses nothing. A running daemon goes on feeding it. --json prints {index,sessions,rows,seconds,skipped:[{source,message}]}.',
    load: () => import('./commands/reindex.js'),
  },
];
