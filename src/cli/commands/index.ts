/** Every command, in the order `openboa --help` lists them. */
import type { CommandSpec } from '../command.js';
import { sessionCreate } from './session-create.js';
import { sessions } from './sessions.js';
import { status } from './status.js';
import { send } from './send.js';
import { events } from './events.js';
import { schedule } from './schedule.js';
import { wakes } from './wakes.js';
import { start } from './start.js';
import { wakeCommand } from './wake.js';
import { daemonCommand } from './daemon.js';
import { confirm } from './confirm.js';
import { toolResult } from './tool-result.js';
import { interrupt } from './interrupt.js';
import { sessionUpdate } from './session-update.js';
import { agents } from './agents.js';
import { init } from './init.js';
import { doctor } from './doctor.js';

export const COMMANDS: CommandSpec[] = [
  init,
  doctor,
  start,
  daemonCommand,
  wakeCommand,
  agents,
  sessionCreate,
  sessionUpdate,
  sessions,
  status,
  send,
  events,
  confirm,
  toolResult,
  interrupt,
  schedule,
  wakes,
];
