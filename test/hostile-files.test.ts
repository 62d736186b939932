/**
 * Hostile run folders (issue 13, holes 1 and 4): a symbolic link inside a run that leads out of it,
 * a named pipe, and an index row whose path climbs out with `..`. No command may copy bytes from
 * outside the run into its output, print them, or publish such a run; each says which file and why.
 */
import { mkdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolateGitForSuite } from './helpers/git-fixtures.js';
import { HOSTILE_ATTEMPT, hostileRuns } from './helpers/hostile-run.js';
import { RESULTS_REF, ARTIFACTS_REF, cli, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

const CANARY = 'CANARY-outside-the-run-7f3a';
const ATTEMPT = HOSTILE_ATTEMPT;
let secret = '';
let secretJson = '';

/** A fresh exported run, plus files outside it that hold the canary. */
const runs = hostileRuns('agentv-hostile', async (root) => {
  secret = join(root, 'secret.txt');
  await writeFile(secret, `root:x:0:0:${CANARY}\n`);
  secretJson = join(root, 'secret.json');
  await writeFile(
    secretJson,
    JSON.stringify({ run_id: CANARY, total: 1, summary: { passed: 1, failed: 0, total: 1, pass_rate: 1 }, evaluators: [{ name: CANARY }] }),
  );
});
const freshRun = () => runs.fresh();

async function linkOut(dir: string, rel: string, target: string): Promise<void> {
  await unlink(join(dir, rel));
  await symlink(target, join(dir, rel));
}

const leaked = (r: { stdout: string; stderr: string }) => (r.stdout + r.stderr).includes(CANARY);

describe('symbolic links leading out of a run', () => {
  for (const file of ['outputs/answer.md', 'outputs/file_changes.diff']) {
    it(`report skips a linked ${file} with a warning naming it; the page holds none of its bytes`, async () => {
      const dir = await freshRun();
      await linkOut(dir, `${ATTEMPT}/${file}`, secret);
      const out = join(dir, '..', 'r.html');
      const r = await cli(['report', dir, '--out', out, '--skip-unsafe'], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`${ATTEMPT}/${file}`);
      expect(r.stderr).toMatch(/outside the run directory/);
      expect(await readFile(out, 'utf8')).not.toContain(CANARY);
      expect(leaked(r)).toBe(false);
    });
  }

  it('a linked summary.json is not read: summary, report and show print none of its bytes', async () => {
    const dir = await freshRun();
    await writeFile(secretJson.replace('.json', '-bad.json'), `{not json ${CANARY}`);
    await linkOut(dir, 'summary.json', secretJson.replace('.json', '-bad.json'));
    for (const args of [
      ['summary', dir],
      ['summary', dir, '--json'],
      ['show', dir, '--skip-unsafe'],
      ['report', dir, '--out', join(dir, '..', 's.html'), '--skip-unsafe'],
    ]) {
      const r = await cli(args, dir);
      expect(leaked(r), `${args[0]}: ${r.stdout}${r.stderr}`).toBe(false);
      expect(r.stderr, args[0]).toMatch(/summary\.json .*outside the run directory/);
    }
    // A readable JSON behind the link must not be taken for the run's summary either.
    await linkOut(dir, 'summary.json', secretJson);
    const s = await cli(['summary', dir, '--json'], dir);
    expect(leaked(s)).toBe(false);
  });

  it('show does not read a linked grading.json', async () => {
    const dir = await freshRun();
    await linkOut(dir, `${ATTEMPT}/grading.json`, secretJson);
    const r = await cli(['show', dir, '--json', '--skip-unsafe'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(leaked(r)).toBe(false);
    expect(r.stderr + r.stdout).toContain(`${ATTEMPT}/grading.json`);
  });

  it('export of a workspace refuses a linked sidecar (exit 2) and writes nothing from it', async () => {
    const dir = await freshRun();
    await linkOut(dir, `${ATTEMPT}/outputs/answer.md`, secret);
    await rm(join(dir, `${ATTEMPT}/transcript.json`));
    const out = join(dir, '..', `exp-${Math.random().toString(36).slice(2, 8)}`);
    const r = await cli(['export', dir, '--out', out], dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${ATTEMPT}/outputs/answer.md`);
    expect(leaked(r)).toBe(false);
    const files = execFileSync('sh', ['-c', `grep -rl ${CANARY} ${out} 2>/dev/null || true`]).toString();
    expect(files).toBe('');
  });

  it('a named pipe in a run is refused, not read (report would block forever)', async () => {
    const dir = await freshRun();
    await unlink(join(dir, `${ATTEMPT}/outputs/answer.md`));
    execFileSync('mkfifo', [join(dir, `${ATTEMPT}/outputs/answer.md`)]);
    const r = await cli(['report', dir, '--out', join(dir, '..', 'p.html'), '--skip-unsafe'], dir, { timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/outputs\/answer\.md is a named pipe/);
  });

  it('publish refuses a run holding a link (exit 2, naming it) and commits nothing', async () => {
    const user = await makeUserRepo();
    const dir = await freshRun();
    await linkOut(dir, `${ATTEMPT}/outputs/answer.md`, secret);
    const r = await cli(['publish', dir, '--push'], user.work);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${ATTEMPT}/outputs/answer.md`);
    expect(r.stderr).toMatch(/symbolic link/);
    expect(await tip(user.work, RESULTS_REF)).toBeNull();
    expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
  });
});

describe('row paths that escape the run', () => {
  for (const [field, value] of [
    ['answer_path', '../../../../etc/passwd'],
    ['transcript_path', '/etc/passwd'],
    ['result_dir', 's/../../x'],
    ['grading_path', 's/.git/config'],
  ] as const) {
    it(`publish refuses ${field}: ${JSON.stringify(value)} before writing anything (exit 2)`, async () => {
      const user = await makeUserRepo();
      const dir = await freshRun();
      const idx = join(dir, 'index.jsonl');
      const row = JSON.parse((await readFile(idx, 'utf8')).trim()) as Record<string, unknown>;
      row[field] = value;
      await writeFile(idx, JSON.stringify(row) + '\n');
      const r = await cli(['publish', dir, '--push'], user.work);
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toContain(field);
      expect(r.stderr).toMatch(/escapes the run directory/);
      expect(await tip(user.work, RESULTS_REF)).toBeNull();
      expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
    });
  }

  it('report and show do not follow such a row either', async () => {
    const dir = await freshRun();
    await mkdir(join(dir, '..', 'x'), { recursive: true });
    await writeFile(join(dir, '..', 'x', 'a.md'), CANARY);
    const idx = join(dir, 'index.jsonl');
    const row = JSON.parse((await readFile(idx, 'utf8')).trim()) as Record<string, unknown>;
    row.answer_path = '../x/a.md';
    await writeFile(idx, JSON.stringify(row) + '\n');
    const out = join(dir, '..', 'e.html');
    const r = await cli(['report', dir, '--out', out, '--skip-unsafe'], dir);
    expect(await readFile(out, 'utf8')).not.toContain(CANARY);
    expect(r.stderr).toMatch(/answer_path .*escapes the run directory/);
  });
});

describe('pull of a hand-edited branch', () => {
  it('refuses a row whose path escapes the run (exit 2) and writes nothing', async () => {
    const user = await makeUserRepo();
    const dir = await freshRun();
    const p = await cli(['publish', dir], user.work);
    expect(p.code, p.stderr).toBe(0);
    // Edit the published index.jsonl on the branch with plumbing, as a hostile collaborator could.
    const sh = (script: string) =>
      execFileSync('sh', ['-c', script], { cwd: user.work, env: { ...process.env, GIT_INDEX_FILE: join(user.root, 'tmp-index') } })
        .toString()
        .trim();
    const idxPath = sh(`git ls-tree -r --name-only ${RESULTS_REF} | grep 'index.jsonl$' | head -1`);
    const row = JSON.parse(sh(`git show ${RESULTS_REF}:${idxPath}`).split('\n')[0]!) as Record<string, unknown>;
    row.answer_path = '../../../../etc/passwd';
    await writeFile(join(user.root, 'row.jsonl'), JSON.stringify(row) + '\n');
    const blob = sh(`git hash-object -w ${join(user.root, 'row.jsonl')}`);
    sh(`git read-tree ${RESULTS_REF} && git update-index --cacheinfo 100644,${blob},${idxPath}`);
    const commit = sh(`git commit-tree $(git write-tree) -p ${RESULTS_REF} -m hostile`);
    sh(`git update-ref ${RESULTS_REF} ${commit}`);
    const out = join(user.root, 'pulled');
    const r = await cli(['pull', row.run_id as string, '--out', out], user.work);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/answer_path "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" escapes the run directory/);
    await expect(readFile(join(out, 'index.jsonl'))).rejects.toThrow();
  });
});
