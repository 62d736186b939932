/**
 * Whether a process with this pid exists on this machine. Signal 0 checks without sending
 * anything; EPERM means it exists but belongs to another user. Used to tell leftovers of a killed
 * process (staging directories, locks, crash reports) from those of a live one.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
