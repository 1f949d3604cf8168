import { createSession, sendMessage } from '../../core/session-ops.js';
import { describeEvent, viewEvents } from '../../core/event-view.js';
import type { CommandSpec } from '../command.js';

export const FIRST_MESSAGE = 'Hello! Please look around your workspace, leave a note, and check on it later.';

export const start: CommandSpec = {
  path: ['start'],
  summary: 'the first-minute demo: create a demo session if none exists, then show it',
  details: 'This is what `npm start` runs on the repository\'s own home.',
  async run(ctx) {
    let id = ctx.store.listIds()[0];
    if (!id) {
      const s = createSession(ctx.store, { agent: 'demo', title: 'first demo' });
      const m = sendMessage(ctx.store, s.id, FIRST_MESSAGE);
      id = s.id;
      ctx.out.note(`created demo session ${s.id} and sent it a first message (${m.id})`);
    }
    for (const v of viewEvents(ctx.store.readEvents(id).lines)) {
      if ('invalid' in v) ctx.out.result(v, `${v.line}  INVALID  ${v.invalid.message}`);
      else ctx.out.result(v, `${v.line}  ${v.event.type.padEnd(24)}  ${describeEvent(v.event)}`);
    }
    ctx.out.note(`\nsession ${id} in ${ctx.home.sessionsDir}\n  append a line:  openboa send ${id} "hi"\n  read the log:   openboa events ${id} --follow`);
  },
};
