/** A one-line progress indicator on stderr, only when stderr is a terminal and the input is large. */
const LARGE = 16 * 1024 * 1024;

export function progressReporter(label: string) {
  const tty = Boolean(process.stderr.isTTY) && !process.env.CI;
  let last = 0;
  let shown = false;
  return {
    update: (done: number, total: number) => {
      if (!tty || total < LARGE) return;
      const now = Date.now();
      if (now - last < 200 && done < total) return;
      last = now;
      shown = true;
      const pctDone = total === 0 ? 100 : Math.floor((done / total) * 100);
      process.stderr.write(`\r${label} ${pctDone}% (${(done / 1048576).toFixed(0)}/${(total / 1048576).toFixed(0)} MB)`);
    },
    done: () => {
      if (shown) process.stderr.write('\r\u001b[2K');
    },
  };
}
