/**
 * How a run is cut short: the reasons (AbortReason) and the one object that
 * carries the first of them to the model request, the shell and every tool
 * (RunControl). The reason decides how the run is closed in the log
 * (settle.ts).
 */

/** Why a run was cut short. The reason decides how the run is closed in the log. */
export type AbortReason =
  | { kind: 'interrupt' }
  | { kind: 'shutdown' }
  /** A user.pause arrived: the run stops at its next step (pause-steering.ts). */
  | { kind: 'paused' }
  | { kind: 'deadline'; seconds: number }
  | { kind: 'lease_lost'; message: string }
  /** The log refused the run's own opening record: it writes nothing more (see wake.ts). */
  | { kind: 'log_refused'; message: string };

/**
 * Cuts a run short. The first reason wins; the signal reaches the model
 * request, the shell and every tool.
 */
export class RunControl {
  private readonly controller = new AbortController();
  private why: AbortReason | null = null;
  private mute = false;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  reason(): AbortReason | null {
    return this.why;
  }

  /** The first reason wins the run's ending; a lost lease or a refusing log silences it whatever came first. */
  abort(reason: AbortReason): void {
    if (reason.kind === 'lease_lost' || reason.kind === 'log_refused') this.mute = true;
    if (this.why) return;
    this.why = reason;
    this.controller.abort(reason);
  }

  /**
   * Nothing more may be written: another process may own the log now, or
   * the log refuses this run. Set by such a reason even when the run was
   * already stopping for another (a shutdown, an interrupt, its deadline).
   */
  get silenced(): boolean {
    return this.mute;
  }
}
