/**
 * Progress of long work: one line on stderr, rewritten in place and erased when the work ends.
 * Shown only when stderr is a terminal (not piped, not under CI), never with --json, and only once
 * the work has run for a second, so a quick command prints nothing more than it did.
 *
 * A command names what it is doing (`step`), and where it knows how far it is, says so (`update`):
 * `exporting 45% (12/27 MB)`, `publishing: writing 21379 files… 3s`, `syncing with origin… 2s`.
 */

/** Where the line goes; a test passes its own terminal-like stream. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** --json, or any reason to stay silent. */
  quiet?: boolean;
  /** What `update`'s numbers count (default: bytes, shown in MB). */
  unit?: 'bytes' | 'files' | 'rows' | 'runs';
  stream?: ProgressStream;
  /** Nothing is shown before the work has run this long (default 1000 ms; AGENTV_PROGRESS_AFTER_MS). */
  afterMs?: number;
}

export interface Progress {
  /** What the work is doing now (replaces the previous step). */
  step(text: string): void;
  /** How far the current step is: `done` of `total`. */
  update(done: number, total: number): void;
  /** The work ended: erase the line if one was shown. Safe to call twice. */
  done(): void;
}

const REDRAW_MS = 200;

function defaultAfterMs(): number {
  const v = Number(process.env.AGENTV_PROGRESS_AFTER_MS);
  return Number.isFinite(v) && v >= 0 ? v : 1000;
}

export function progressReporter(label: string, opts: ProgressOptions = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const enabled = !opts.quiet && Boolean(stream.isTTY) && !process.env.CI;
  const afterMs = opts.afterMs ?? defaultAfterMs();
  const unit = opts.unit ?? 'bytes';
  const started = Date.now();
  let stepText = '';
  let count: { done: number; total: number } | null = null;
  let lastDraw = 0;
  let shown = false;
  let ended = false;

  const render = (): string => {
    const head = stepText ? `${label}: ${stepText}` : label;
    if (count) {
      const pct = count.total === 0 ? 100 : Math.floor((count.done / count.total) * 100);
      return unit === 'bytes'
        ? `${head} ${pct}% (${(count.done / 1048576).toFixed(0)}/${(count.total / 1048576).toFixed(0)} MB)`
        : `${head} ${count.done}/${count.total} ${unit}`;
    }
    return `${head}… ${Math.floor((Date.now() - started) / 1000)}s`;
  };
  const draw = (force: boolean): void => {
    if (!enabled || ended) return;
    const now = Date.now();
    if (now - started < afterMs) return;
    if (!force && now - lastDraw < REDRAW_MS) return;
    lastDraw = now;
    shown = true;
    stream.write(`\r\u001b[2K${render()}`);
  };
  // The line appears once the threshold passes, and its elapsed seconds move while nothing else
  // does (a push, a fetch). unref: neither timer keeps the process alive.
  let timer: NodeJS.Timeout | null = null;
  const first = enabled
    ? setTimeout(() => {
        draw(true);
        timer = setInterval(() => draw(true), 250);
        timer.unref();
      }, afterMs)
    : null;
  first?.unref();

  return {
    step: (text) => {
      stepText = text;
      count = null;
      draw(true);
    },
    update: (done, total) => {
      count = { done, total };
      draw(done >= total);
    },
    done: () => {
      if (ended) return;
      ended = true;
      if (first) clearTimeout(first);
      if (timer) clearInterval(timer);
      if (shown) stream.write('\r\u001b[2K');
    },
  };
}
