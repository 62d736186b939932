/** The daemon's stop and wake-up switch, shared by its loop and whatever stops it. */
import type { DaemonReport } from './daemon-options.js';

/**
 * The daemon's stop and wake-up switch: a signal, an abort, a lost lock or `--once` finishing stop
 * it; a file event or a finished checkpoint wakes its sleep early.
 */
export class Switch {
  stopping = false;
  stoppedBy: DaemonReport['stoppedBy'];
  private wakeUp: (() => void) | null = null;

  constructor(initial: DaemonReport['stoppedBy']) {
    this.stoppedBy = initial;
  }

  readonly wake = (): void => {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  };

  stop(why: DaemonReport['stoppedBy']): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stoppedBy = why;
    this.wake();
  }

  /** Sleeps until `until` (epoch ms) or the next wake-up, whichever comes first. */
  sleepUntil(until: number): Promise<void> {
    return new Promise<void>((res) => {
      const timer = setTimeout(res, Math.max(10, until - Date.now()));
      this.wakeUp = () => {
        clearTimeout(timer);
        res();
      };
    });
  }
}
