/**
 * validate = publish (issue 40, item 3): one safety check (src/runs/read/run-safety.ts) decides for
 * `validate`, `report`, `show`, `publish` (with and without --allow-invalid) and the daemon. Each
 * hostile run folder below was "✓ valid" to validate and read silently by report and show while
 * publish refused it (or, with --allow-invalid, stored an unsafe id or pointer).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { isolateGitForSuite } from './helpers/git-fixtures.js';
import { HOSTILE_ATTEMPT, hostileRuns } from './helpers/hostile-run.js';
import { appendRows } from './helpers/wip-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

const runs = hostileRuns('agentv-vp', async () => {});

async function editJson(file: string, edit: (doc: Record<string, unknown>) => void): Promise<void> {
  const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(doc);
  await writeFile(file, JSON.stringify(doc, null, 2));
}

async function editRow(dir: string, edit: (row: Record<string, unknown>) => void): Promise<void> {
  const idx = join(dir, 'index.jsonl');
  const row = JSON.parse((await readFile(idx, 'utf8')).trim()) as Record<string, unknown>;
  edit(row);
  await writeFile(idx, JSON.stringify(row) + '\n');
}

/** Each hostile case: how to spoil a fresh run, and what every command must say about it. */
const CASES: { name: string; spoil: (dir: string) => Promise<void>; says: RegExp }[] = [
  {
    name: 'an unreferenced notes.txt linked to /etc/passwd',
    spoil: (dir) => symlink('/etc/passwd', join(dir, 'notes.txt')),
    says: /notes\.txt:? is a symbolic link leading out of the run \(to \/etc\/passwd\)/,
  },
  {
    name: 'a directory link leading out',
    spoil: (dir) => symlink('/etc', join(dir, 's', 'etc')),
    says: /s\/etc:? is a symbolic link leading out of the run/,
  },
  {
    name: 'a directory link staying inside',
    spoil: (dir) => symlink('alpha', join(dir, 's', 'alias')),
    says: /s\/alias:? is a symbolic link to a directory/,
  },
  {
    name: 'a named pipe nobody references',
    spoil: async (dir) => {
      execFileSync('mkfifo', [join(dir, HOSTILE_ATTEMPT, 'stray.pipe')]);
    },
    says: /stray\.pipe:? is a named pipe/,
  },
  {
    name: 'a result.json whose output points at /etc/passwd',
    spoil: (dir) => editJson(join(dir, HOSTILE_ATTEMPT, 'result.json'), (d) => (d.output = '/etc/passwd')),
    says: /result\.json: output "\/etc\/passwd" points outside the run/,
  },
  {
    name: 'a result.json whose grading_path climbs out with ../',
    spoil: (dir) => editJson(join(dir, HOSTILE_ATTEMPT, 'result.json'), (d) => (d.grading_path = '../../../../../etc/passwd')),
    says: /result\.json: grading_path "\.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" points outside the run/,
  },
  {
    name: 'a run_id of ../x',
    spoil: (dir) => editRow(dir, (r) => (r.run_id = '../x')),
    says: /run_id "\.\.\/x" is not a safe path segment/,
  },
  {
    name: 'a run_id holding a NUL',
    spoil: (dir) => editRow(dir, (r) => (r.run_id = 'a\u0000b')),
    says: /run_id "a\\u0000b" is not a safe path segment/,
  },
];

describe('one check decides for validate, report, show and publish', () => {
  for (const c of CASES) {
    it(`${c.name}: validate rejects it, report and show exit 2, publish (even --allow-invalid) refuses it`, async () => {
      const dir = await runs.fresh();
      await c.spoil(dir);
      const v = await cli(['validate', dir], dir, { timeoutMs: 30_000 });
      expect(v.code, v.stdout + v.stderr).toBe(1);
      expect(v.stdout + v.stderr).toMatch(c.says);
      const vj = await cli(['validate', dir, '--json'], dir, { timeoutMs: 30_000 });
      expect((JSON.parse(vj.stdout) as { valid: boolean }).valid).toBe(false);

      for (const args of [
        ['show', dir],
        ['report', dir, '--out', join(dir, '..', 'r.html')],
      ]) {
        const r = await cli(args, dir, { timeoutMs: 30_000 });
        expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stderr, args[0]).toMatch(c.says);
      }

      const user = await makeUserRepo();
      for (const extra of [[], ['--allow-invalid']]) {
        const p = await cli(['publish', dir, ...extra], user.work, { timeoutMs: 30_000 });
        expect(p.code, `publish ${extra.join(' ')}: ${p.stdout}${p.stderr}`).toBe(2);
        expect(p.stderr).toMatch(c.says);
      }
      expect(await tip(user.work, RESULTS_REF)).toBeNull();
      expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
    });
  }

  it('a pristine run passes all of them (the check refuses only what is unsafe)', async () => {
    const dir = await runs.fresh();
    // A pointer that climbs within the run is fine: it stays inside it.
    await editJson(join(dir, HOSTILE_ATTEMPT, 'result.json'), (d) => (d.output = '../attempt-0/outputs/answer.md'));
    expect((await cli(['validate', dir], dir)).code).toBe(0);
    expect((await cli(['show', dir], dir)).code).toBe(0);
    const user = await makeUserRepo();
    const p = await cli(['publish', dir], user.work);
    expect(p.code, p.stderr).toBe(0);
    expect(await tip(user.work, RESULTS_REF)).not.toBeNull();
  });
});

describe('the daemon parks a run publish refuses for good', () => {
  it('a finished run holding a named pipe is marked failed with the reason, named in status, and not retried', async () => {
    const user = await makeUserRepo();
    const runId = 'exp/2026-03-09T10-00-00-000Z';
    const dir = join(user.work, '.agentv/results', runId);
    appendRows(dir, 0, 2);
    mkdirSync(join(dir, 'extra'), { recursive: true });
    execFileSync('mkfifo', [join(dir, 'extra', 'stray.pipe')]);
    writeFileSync(join(dir, 'summary.json'), '{}\n');

    const once = await runCli(['daemon', '--once', '--dir', user.work], { timeoutMs: 60_000 });
    expect(once.stderr).toMatch(/publish refused; run parked/);
    const status = async () =>
      (
        JSON.parse((await runCli(['status', '--json', '--dir', user.work])).stdout) as {
          extra: { outbox: { failed: Record<string, unknown>[]; queued: unknown[] } };
        }
      ).extra.outbox;
    const first = await status();
    expect(first.queued).toEqual([]);
    expect(first.failed).toHaveLength(1);
    expect(first.failed[0]).toMatchObject({ kind: 'publish', attempts: 0 });
    expect(String(first.failed[0]!.run)).toContain('2026-03-09T10-00-00-000Z');
    expect(String(first.failed[0]!.error)).toMatch(/^refused: .*stray\.pipe is a named pipe/s);
    const human = await runCli(['status', '--dir', user.work]);
    expect(human.stdout).toMatch(/stray\.pipe/);

    // A second pass finds the parked run and leaves it parked: no new attempt, no new refusal.
    const again = await runCli(['daemon', '--once', '--dir', user.work], { timeoutMs: 60_000 });
    expect(again.stderr).not.toMatch(/publish refused/);
    expect((await status()).failed).toEqual(first.failed);
    expect(await tip(user.work, RESULTS_REF)).toBeNull();
  });
});
