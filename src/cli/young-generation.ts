/**
 * Keeps a long-lived process's V8 young generation at its starting size.
 *
 * V8 grows the young generation (from 1 MB to 16 MB per semi-space) while a
 * process allocates fast with many survivors, and never gives it back while
 * the process is quiet. The daemon's start is such a burst (the scan, the
 * search index's catch-up of every log), after which it idles for hours: at
 * 10,000 sessions the grown young generation was about 30 MB of its resident
 * memory (docs/benchmarks.md, idle). With growth factor 1 it is never grown:
 * scavenges come more often and each copies as little as before, since what
 * survives is the same. run.ts calls this for the commands marked
 * `longLived` (the daemon), before their code loads.
 *
 * `--semi-space-growth-factor` is read by V8 at each growth, so setting it
 * once the process runs takes effect (unlike `--max-semi-space-size`, read
 * only when the heap is made).
 */
import v8 from 'node:v8';

export function holdYoungGeneration(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
