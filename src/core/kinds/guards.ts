/** The failure guards' record (docs/context.md, "Guards"): a nudge is the model's next user turn, where its line sits. */
import { NUDGE_ACTIONS } from '../schema/guards.js';
import { capability } from './event-kind.js';

export const guards = capability({
  name: 'guards',
  kinds: {
    'session.guard': {
      conversation: {
        enter(sink, e) {
          // Its other records (an escalation) are in the tool results already.
          if (NUDGE_ACTIONS.has(e.action)) sink.userText(e.message, { closesTurn: true });
        },
      },
    },
  },
});
