/**
 * What agents write reaches a person's terminal only as visible text: no
 * escape sequence of theirs can clear the screen, move the cursor, retitle
 * the window or reorder a line, while openboa's own colours still work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeText } from '../../src/cli/safe-text.js';
import { paint } from '../../src/cli/terminal.js';

test('control characters of agent text are shown, not obeyed; our colours pass', () => {
  const hostile = 'Hi \u001b]0;pwned\u0007\u001b[2J\u001b[1Ab \u202eevil\u0085 tab\there\nnext';
  assert.equal(safeText(hostile), 'Hi \\u001b]0;pwned\\u0007\\u001b[2J\\u001b[1Ab \\u202eevil\\u0085 tab\there\nnext');
  const ours = paint(true, 'red', 'error') + paint(true, 'dim', 'x');
  assert.equal(safeText(ours), ours);
  assert.equal(safeText('plain text'), 'plain text');
  // A colour code we do not use (conceal, 8) is shown, not obeyed.
  assert.equal(safeText('\u001b[8mhidden'), '\\u001b[8mhidden');
});
