/**
 * Benchmark helpers. The machine is shared and noisy, so every figure is a median of several runs
 * and is reported as a ratio against a baseline measured in the same run.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'dist/cli/main.js');

/** The environment of a trial's processes: no colour, a fixed git identity, no system git config. */
export const TRIAL_ENV = {
  ...process.env,
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@t.invalid',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@t.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function timeIt(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Run fn `n` times (after `warmup` discarded runs); returns the median ms and all samples. */
export async function sample(n, fn, { warmup = 1, before } = {}) {
  const samples = [];
  for (let i = 0; i < warmup + n; i++) {
    if (before) await before(i);
    const { ms } = await timeIt(() => fn(i));
    if (i >= warmup) samples.push(ms);
  }
  return { median: median(samples), samples };
}

/**
 * Run a command and measure its wall time and peak RSS (from GNU time's %M when available,
 * else from /proc polling of the child).
 */
export function runMeasured(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%M', cmd, ...args], { ...opts, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      const lines = stderr.trim().split('\n');
      const kb = Number(lines[lines.length - 1]);
      resolve({ ms, peakRssMb: Number.isFinite(kb) ? kb / 1024 : null });
    });
  });
}

/**
 * One process, killed by pid (SIGKILL) once `boundMs` has passed; never throws. Resolves with its
 * exit code (null when a signal ended it), the signal, and its output.
 */
export function runBounded(cmd, args, { cwd, env = TRIAL_ENV, boundMs }) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

/** The Dashboard URL a `serve` child prints on stderr; rejects, with its stderr, when it exits first. */
export function dashboardUrl(child) {
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = /Dashboard: (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (m) resolve(m[1]);
    });
    child.on('close', (code) => reject(new Error(`serve exited ${code}: ${err.slice(-1500)}`)));
  });
}

export function ratio(a, b) {
  return b === 0 ? Infinity : a / b;
}

export function fmtRatio(x) {
  return `${x.toFixed(2)}x`;
}

export function fmtMs(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/**
 * For `page.evaluate` in a browser benchmark: resolves with the page's first contentful paint (ms
 * from navigation) once the browser has one. Evaluated over CDP, which a page's CSP (no eval)
 * does not apply to.
 */
export const firstContentfulPaint = () =>
  new Promise((resolve) => {
    const poll = () => {
      const entry = performance.getEntriesByName('first-contentful-paint')[0];
      if (entry) resolve(entry.startTime);
      else setTimeout(poll, 10);
    };
    poll();
  });

/** `serve --port 0` in `repo` (the CLI as its own process), once it prints its URL; stop() ends it by pid. */
export async function startServe(repo, cli = CLI) {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0'], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(child.pid, 'SIGKILL');
      reject(new Error(`serve printed no URL within 120 s: ${err}`));
    }, 120_000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /Dashboard: (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${err}`));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      child.removeAllListeners('exit');
      child.on('exit', resolve);
      process.kill(child.pid, 'SIGTERM');
    });
  return { url, pid: child.pid, stop };
}
