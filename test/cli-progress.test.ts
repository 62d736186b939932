/**
 * Progress of long work: a line on a terminal's stderr, erased at the end; nothing when stderr is
 * piped, with --json, under CI, or for work shorter than the threshold. The module is checked with
 * a terminal-like stream; the commands run in a real pseudo-terminal (util-linux `script`), with
 * AGENTV_PROGRESS_AFTER_MS=0 so a small run shows what a long one would.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { progressReporter } from '../src/cli/progress.js';
import { HAS_SCRIPT, NO_SCRIPT, runInTerminal, spawnCli } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { gitEnvForTests, isolateGitForSuite } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

isolateGitForSuite();

const CLEAR = '\r\u001b[2K';

function terminal(isTTY = true) {
  const written: string[] = [];
  return { stream: { isTTY, write: (t: string) => written.push(t) }, text: () => written.join('') };
}

describe('the progress line', () => {
  let ci: string | undefined;
  beforeEach(() => {
    ci = process.env.CI;
    delete process.env.CI;
  });
  afterEach(() => {
    if (ci !== undefined) process.env.CI = ci;
  });

  it('on a terminal: the step, counts in their unit, then erased', () => {
    const t = terminal();
    const p = progressReporter('publishing', { stream: t.stream, afterMs: 0, unit: 'files' });
    p.step('committing 3 files');
    p.update(3, 3);
    p.done();
    p.done();
    expect(t.text()).toMatch(/^\r\u001b\[2Kpublishing: committing 3 files… \d+s\r\u001b\[2Kpublishing: committing 3 files 3\/3 files\r\u001b\[2K$/);
  });

  it('bytes are shown in MB with a percentage', () => {
    const t = terminal();
    const p = progressReporter('exporting', { stream: t.stream, afterMs: 0 });
    p.update(8 * 1048576, 32 * 1048576);
    p.done();
    expect(t.text()).toContain('exporting 25% (8/32 MB)');
  });

  it('silent when piped, quiet (--json), under CI, or before the threshold', () => {
    const cases = [
      { stream: terminal(false), opts: {} },
      { stream: terminal(), opts: { quiet: true } },
      { stream: terminal(), opts: { afterMs: 60_000 } },
    ];
    for (const { stream, opts } of cases) {
      const p = progressReporter('syncing', { stream: stream.stream, afterMs: 0, ...opts });
      p.step('pushing');
      p.update(1, 1);
      p.done();
      expect(stream.text()).toBe('');
    }
    process.env.CI = 'true';
    const t = terminal();
    const p = progressReporter('syncing', { stream: t.stream, afterMs: 0 });
    p.step('pushing');
    p.done();
    expect(t.text()).toBe('');
  });
});

/** The built CLI on a pseudo-terminal, showing progress from the first moment, outside CI. */
function inTerminal(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...gitEnvForTests(), AGENTV_PROGRESS_AFTER_MS: '0', NO_COLOR: '1', TERM: 'xterm' };
  delete env.CI;
  return runInTerminal(args, { cwd, env }).then((r) => ({ code: r.code, out: r.output }));
}

describe.skipIf(!HAS_SCRIPT)(`commands on a terminal${NO_SCRIPT}`, () => {
  it('export, report, publish --push, sync, pull --with-artifacts, list/status --fetch, tag, feedback, gate --update-baseline, wip list/clean and archive show their progress, then erase it', async () => {
    const user = await makeUserRepo();
    const example = join(REPO_ROOT, 'examples/results/demo-agent.jsonl');
    const exported = await inTerminal(['export', example, '--out', join(user.root, 'run')], user.work);
    expect(exported.code, exported.out).toBe(0);
    expect(exported.out).toMatch(/exporting \d+% \(0\/0 MB\)\r\u001b\[2K/);

    const reported = await inTerminal(['report', join(user.root, 'run')], user.work);
    expect(reported.code, reported.out).toBe(0);
    expect(reported.out).toMatch(/\r\u001b\[2Kwriting the report \d+\/\d+ rows/);

    const published = await inTerminal(['publish', join(user.root, 'run'), '--push'], user.work);
    expect(published.code, published.out).toBe(0);
    for (const step of ['reading the run', 'committing \\d+ files', 'pushing to origin'])
      expect(published.out).toMatch(new RegExp(`\\r\\u001b\\[2Kpublishing: ${step}`));
    // Erased before the result is printed.
    expect(published.out).toMatch(/\r\u001b\[2KPublished /);

    const synced = await inTerminal(['sync'], user.work);
    expect(synced.code, synced.out).toBe(0);
    expect(synced.out).toMatch(/\r\u001b\[2Ksyncing… \d+s/);

    const pulled = await inTerminal(['pull', '2026-11-20T09-00-00-000Z', '--with-artifacts', '--fetch', '--out', join(user.root, 'pulled')], user.work);
    expect(pulled.code, pulled.out).toBe(0);
    for (const step of ['fetching from origin', 'reading the run', 'reading \\d+ payloads', 'writing \\d+ files'])
      expect(pulled.out).toMatch(new RegExp(`\\r\\u001b\\[2Kpulling: ${step}… \\d+s`));

    // The other reads and writes that talk to the remote: list and status with --fetch, tag and
    // feedback edits, the gate's baseline move, the WIP branches' listing and clean-up, archive.
    for (const [args, line] of [
      [['list', '--fetch'], /\r\u001b\[2Kfetching… \d+s/],
      [['status', '--fetch'], /\r\u001b\[2Kfetching… \d+s/],
      [['tag', '2026-11-20T09-00-00-000Z', '+nightly'], /\r\u001b\[2Ktagging… \d+s/],
      [['feedback', '2026-11-20T09-00-00-000Z', 'refund-eligibility', 'fine', '--reviewer', 'ana'], /\r\u001b\[2Ksaving feedback… \d+s/],
      [['gate', '@nightly', '2026-11-20T09-00-00-000Z', '--update-baseline'], /\r\u001b\[2Kmoving the baseline tag… \d+s/],
      [['wip', 'list'], /\r\u001b\[2Kfetching… \d+s/],
      [['wip', 'clean'], /\r\u001b\[2Kcleaning… \d+s/],
      [['archive', '--keep-days', '100000', '--keep-runs', '0'], /\r\u001b\[2Karchiving… \d+s/],
    ] as const) {
      const r = await inTerminal([...args], user.work);
      expect(r.code, r.out).toBe(0);
      expect(r.out, args.join(' ')).toMatch(line);
    }
  }, 180_000);

  it('--json on a terminal and a piped stderr show no progress', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace();
    const json = await inTerminal(['publish', run.dir, '--json'], user.work);
    expect(json.code, json.out).toBe(0);
    expect(json.out).not.toContain('publishing');
    expect(json.out).not.toContain(CLEAR);
    const piped = await spawnCli(['sync'], { cwd: user.work, env: { ...gitEnvForTests(), AGENTV_PROGRESS_AFTER_MS: '0', CI: undefined } });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
  }, 120_000);
});
