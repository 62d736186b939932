/**
 * Process signal plumbing shared by exec and the daemon: subscribe to the termination signals,
 * get them one by one, and unsubscribe (so the default action comes back after shutdown).
 */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function onSignals(signals: readonly NodeJS.Signals[], handler: (signal: NodeJS.Signals) => void): () => void {
  const bound = signals.map((sig) => {
    const fn = (): void => handler(sig);
    process.on(sig, fn);
    return [sig, fn] as const;
  });
  return () => {
    for (const [sig, fn] of bound) process.removeListener(sig, fn);
  };
}

/** Exit status for "terminated by signal", shell style. */
export function signalStatus(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 };
  return 128 + (numbers[signal] ?? 15);
}
