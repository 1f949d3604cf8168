/** Pause and resume (docs/context.md): lines that apply where they sit (store/pause-fold.ts). */
import { applyPauseLine, noteRunPaused } from '../store/pause-fold.js';
import { capability } from './event-kind.js';

export const pause = capability({
  name: 'pause',
  kinds: {
    'user.pause': { fold: { inPlace: applyPauseLine } },
    'user.resume': { fold: { inPlace: applyPauseLine } },
    'session.run_paused': { fold: { apply: noteRunPaused } },
  },
});
