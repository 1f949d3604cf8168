/**
 * runtime/: the facts a run used, rewritten (temp file + rename) at the start
 * and end of every run and when they change, so a person or the agent itself
 * can reread them (mounted read-only at /runtime). They are caches: each can
 * be rebuilt, and none is ever the only copy of a fact. Everything written
 * here passes through the run's redactor.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Redactor } from '../foundation/redact.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { describeEvent } from '../views/event-view.js';
import type { LoggedEvent } from './conversation.js';

function sameContent(file: string, text: string): boolean {
  try {
    const st = fs.statSync(file);
    return st.size === Buffer.byteLength(text) && fs.readFileSync(file, 'utf8') === text;
  } catch {
    return false;
  }
}

export class RuntimeFiles {
  constructor(
    readonly dir: string,
    private readonly redactor: Redactor,
  ) {}

  write(name: string, content: string): void {
    try {
      const file = path.join(this.dir, name);
      const text = this.redactor.text(content);
      // Most facts are the same as last run's: leave an identical file alone.
      if (sameContent(file, text)) return;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      writeFileAtomic(file, text, { durable: false });
    } catch {
      // runtime/ is a cache; a failed rewrite is retried by the next run
    }
  }

  json(name: string, value: unknown): void {
    this.write(name, `${JSON.stringify(this.redactor.deep(value), null, 2)}\n`);
  }

  /** event-feed.md: the newest events, one line each, for a person or the agent. */
  eventFeed(events: readonly LoggedEvent[], max = 40): void {
    const tail = events.slice(-max);
    const lines = tail.map(({ line, event: e }) => `- ${e.created_at} \`${e.type}\` (line ${line}) ${describeEvent(e)}`.trimEnd());
    this.write('event-feed.md', `# Recent events\n\nThe newest ${tail.length} events of this session's log, oldest first.\n\n${lines.join('\n')}\n`);
  }

  /** summary.md exists from the first run on, so the agent can always read it. */
  ensureSummary(): void {
    if (!fs.existsSync(path.join(this.dir, 'summary.md'))) {
      this.write('summary.md', '# Summary\n\nNo turns have been left out of the context window yet: the model sees the whole conversation.\n');
    }
  }
}
