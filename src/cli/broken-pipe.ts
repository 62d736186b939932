/**
 * `agentv-results list | head -1`: the reader closes the pipe while we still print. That is the
 * reader's choice, not a failure — and a command like `publish … | head` must still finish the
 * work it started (commit, push) rather than die halfway. So once stdout reports EPIPE, further
 * writes are dropped silently and the command runs to its own end and exit code.
 */
export function dropWritesAfterBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stream.write = ((_chunk: unknown, encodingOrCb?: unknown, cb?: unknown) => {
      const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
      if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
      return true;
    }) as typeof stream.write;
  });
}
