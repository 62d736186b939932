/**
 * What the user reads matches what happens (issue 13, hole 6): `--help` never shows
 * "(default: true)" after a --no-<flag>, and the daemon publishes *and pushes* by default, as the
 * README and its --help say.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { RESULTS_REF, cli, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

isolateGitForSuite();

describe('help text', () => {
  it('no --no-<flag> line claims "(default: true)"', async () => {
    for (const cmd of ['publish', 'daemon', 'exec', 'wip', 'sync', 'tag']) {
      const r = await cli([cmd, '--help'], process.cwd());
      for (const line of r.stdout.split('\n').filter((l) => /--no-/.test(l))) expect(line, cmd).not.toMatch(/\(default: true\)/);
    }
    const d = await cli(['daemon', '--help'], process.cwd());
    // (help wraps at the terminal's width: compare the words, not the line breaks)
    expect(d.stdout.replace(/\s+/g, ' ')).toMatch(/--push .*the default: the daemon publishes and pushes/);
  });
});

describe('the daemon pushes by default', () => {
  it('daemon --once publishes a finished run and pushes it without --push', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    // Where AgentV keeps runs: .agentv/results/<run_id> (a bare id such as 2026-03-01T10-00-00-000Z).
    await cp(run.dir, join(user.work, '.agentv/results', run.runId), { recursive: true });
    const r = await cli(['daemon', '--once', '--dir', user.work], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect(await git(user.remote, ['rev-parse', '--verify', '-q', RESULTS_REF], { okCodes: [0, 1] })).toMatch(/^[0-9a-f]{40}$/);
    expect(await git(user.remote, ['ls-tree', '--name-only', RESULTS_REF, `${run.runId}/summary.json`])).toBe(`${run.runId}/summary.json`);
  });
});

describe('impossible values', () => {
  it('export warns about scores outside [0, 1] and negative durations; validate fails on them', async () => {
    const { makeTempDir } = await import('./helpers/git-fixtures.js');
    const { writeFile } = await import('node:fs/promises');
    const dir = await makeTempDir('agentv-ranges');
    const rows = [
      { test_id: 'a', target: 'm', score: 42, timestamp: '2026-03-01T10:00:00Z', duration_ms: 5 },
      { test_id: 'b', target: 'm', score: -5, timestamp: '2026-03-01T10:00:01Z', duration_ms: -10 },
      { test_id: 'c', target: 'm', score: 0.5, timestamp: '2026-03-01T10:00:02Z', duration_ms: 7 },
    ];
    await writeFile(join(dir, 'r.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const e = await cli(['export', 'r.jsonl', '--out', 'run'], dir);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).toMatch(/warning: r\.jsonl:1: score 42 is outside \[0, 1\]/);
    expect(e.stderr).toMatch(/warning: r\.jsonl:2: score -5 is outside \[0, 1\]/);
    expect(e.stderr).toMatch(/warning: r\.jsonl:2: duration_ms -10 is negative/);
    expect(e.stderr).not.toMatch(/r\.jsonl:3/);
    const v = await cli(['validate', 'run'], dir);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(/index\.jsonl:1: score 42 is outside \[0, 1\]/);
    expect(v.stdout + v.stderr).toMatch(/duration_ms -10 is negative/);
  });
});

describe('a catalog file deleted by hand', () => {
  it('runs at the branch root stay listed, read from their own summary.json', async () => {
    const { execFileSync } = await import('node:child_process');
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    expect((await cli(['publish', run.dir], user.work)).code).toBe(0);
    const before = JSON.parse((await cli(['list', '--json'], user.work)).stdout) as { runs: { run_id: string; total: number; path: string }[] };
    expect(before.runs).toHaveLength(1);
    // Drop every catalog file from the branch with plumbing.
    const env = { ...process.env, GIT_INDEX_FILE: join(user.root, 'idx') };
    const sh = (s: string) => execFileSync('sh', ['-c', s], { cwd: user.work, env }).toString().trim();
    sh(
      `git read-tree ${RESULTS_REF} && git rm -q --cached -r .indexes && git update-ref ${RESULTS_REF} $(git commit-tree $(git write-tree) -p ${RESULTS_REF} -m 'drop catalog')`,
    );
    const l = await cli(['list', '--json'], user.work);
    expect(l.code, l.stderr).toBe(0);
    const after = JSON.parse(l.stdout) as { runs: { run_id: string; total: number; path: string }[] };
    expect(after.runs.map((r) => [r.path, r.total])).toEqual(before.runs.map((r) => [r.path, r.total]));
  }, 180_000);
});
