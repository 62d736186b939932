/**
 * `delete`: only run workspaces are ever deleted. Everything else — a random directory, the
 * current directory, a file, a run with extra files, a git root, the home directory, a symlink —
 * is refused with exit 2, and one refusal deletes nothing.
 */
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile, unlink, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HAS_SCRIPT, NO_SCRIPT, runCli, runInTerminal } from './helpers/cli.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-delete-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;

async function run(): Promise<string> {
  const name = `run-${n++}`;
  const src = join(tmp, `${name}.jsonl`);
  await writeFile(
    src,
    [
      { test_id: 'a', target: 'm', score: 1, timestamp: '2026-03-01T10:00:00Z', suite: 'suite-x' },
      { test_id: 'b', target: 'm', score: 0, suite: 'suite-y' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const out = join(tmp, name);
  const r = await runCli(['export', src, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('delete: refusals (exit 2, nothing deleted)', () => {
  it('a random directory', async () => {
    const d = join(tmp, 'random');
    await mkdir(d);
    await writeFile(join(d, 'notes.txt'), 'important');
    const r = await runCli(['delete', d, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a run workspace (no index.jsonl');
    expect(await exists(join(d, 'notes.txt'))).toBe(true);
  });

  it('the current directory, even when it is a run, and any ancestor of it', async () => {
    const d = await run();
    let r = await runCli(['delete', '.', '--yes'], { cwd: d });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.: is the current directory');
    await mkdir(join(d, 'suite-x', 'deeper'), { recursive: true });
    r = await runCli(['delete', d, '--yes'], { cwd: join(d, 'suite-x', 'deeper') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('contains the current directory');
    expect(await exists(join(d, 'index.jsonl'))).toBe(true);
  });

  it("a file (other than a run's index.jsonl)", async () => {
    const d = await run();
    const r = await runCli(['delete', join(d, 'summary.json'), '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a directory');
    expect(await exists(join(d, 'summary.json'))).toBe(true);
  });

  it('a run directory with unexpected files at its top level', async () => {
    const d = await run();
    await writeFile(join(d, 'README.md'), 'my notes');
    await mkdir(join(d, 'src'));
    const r = await runCli(['delete', d, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('holds entries a run workspace does not (README.md, src)');
    expect(await exists(join(d, 'index.jsonl'))).toBe(true);
  });

  it('a git repository root, the filesystem root, the home directory, a symlink, a missing path', async () => {
    const gitRun = await run();
    await mkdir(join(gitRun, '.git'));
    const home = await run();
    const link = join(tmp, 'link-to-run');
    await symlink(await run(), link);
    const r = await runCli(['delete', gitRun, '/', home, link, join(tmp, 'nope'), '--yes'], { env: { HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${gitRun}: is a git repository root`);
    expect(r.stderr).toContain('/: is the filesystem root');
    expect(r.stderr).toContain(`${home}: is your home directory`);
    expect(r.stderr).toContain(`${link}: is a symbolic link`);
    expect(r.stderr).toContain('nope: does not exist');
    expect(await exists(join(home, 'index.jsonl'))).toBe(true);
  });

  it('a folder is vouched for by a row path only when the run really holds that path', async () => {
    const src = join(tmp, 'eval-path.jsonl');
    await writeFile(src, JSON.stringify({ test_id: 'a', score: 1, eval_path: 'evals/support.eval.yaml' }) + '\n');
    const d = join(tmp, 'eval-path-run');
    expect((await runCli(['export', src, '--out', d])).code).toBe(0);
    await mkdir(join(d, 'evals'));
    await writeFile(join(d, 'evals', 'mine.txt'), 'not from the run');
    let r = await runCli(['delete', d, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('holds entries a run workspace does not (evals)');
    // The generated test bundle the row points at: part of the run.
    await writeFile(join(d, 'evals', 'support.eval.yaml'), 'tests: []');
    r = await runCli(['delete', d, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(await exists(d)).toBe(false);
  });

  it('an index.jsonl of plain result rows (not a run this tool wrote) without a summary', async () => {
    const d = join(tmp, 'plain');
    await mkdir(d);
    await writeFile(join(d, 'index.jsonl'), JSON.stringify({ test_id: 'a', score: 1 }) + '\n');
    const r = await runCli(['delete', d, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('index.jsonl rows are not run index rows');
  });

  it('one bad path among good ones deletes nothing', async () => {
    const good = await run();
    const r = await runCli(['delete', good, tmp, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('nothing was deleted');
    expect(await exists(join(good, 'index.jsonl'))).toBe(true);
  });

  it('without a terminal and without --yes: refuses, telling the user to pass --yes', async () => {
    const d = await run();
    const r = await runCli(['delete', d]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pass --yes');
    expect(await exists(d)).toBe(true);
  });
});

describe('delete: deleting runs', () => {
  it('deletes a real run with --yes, by directory or index.jsonl, and lists them with --json', async () => {
    const a = await run();
    const b = await run();
    const r = await runCli(['delete', a, join(b, 'index.jsonl'), '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.deleted.map((d: { dir: string }) => d.dir)).toEqual([a, b]);
    // AgentV's bare run id (the experiment lives in summary.json's metadata).
    expect(out.deleted[0]).toMatchObject({ run_id: '2026-03-01T10-00-00-000Z', rows: 2 });
    expect(await exists(a)).toBe(false);
    expect(await exists(b)).toBe(false);
    // No staging leftovers.
    expect((await readdir(tmp)).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('deletes a summary-only run (index.jsonl gone) and relative paths with --dir', async () => {
    const d = await run();
    await unlink(join(d, 'index.jsonl'));
    const r = await runCli(['delete', d.split('/').pop()!, '--dir', tmp, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Deleted /);
    expect(await exists(d)).toBe(false);
  });

  it('tolerates litter files a file manager leaves', async () => {
    const d = await run();
    await writeFile(join(d, '.DS_Store'), '');
    expect((await runCli(['delete', d, '--yes'])).code).toBe(0);
    expect(await exists(d)).toBe(false);
  });
});

const runInTty = (args: string[], answer: string) => runInTerminal(args, { input: answer });
describe.skipIf(!HAS_SCRIPT)(`delete: on a terminal without --yes${NO_SCRIPT}`, () => {
  it('asks, and "n" deletes nothing (exit 1)', async () => {
    const d = await run();
    const r = await runInTty(['delete', d], 'n\n');
    expect(r.output).toContain('Delete this run? [y/N]');
    expect(r.output).toContain('Nothing deleted.');
    expect(r.code).toBe(1);
    expect(await exists(d)).toBe(true);
  });

  it('asks, and "y" deletes', async () => {
    const d = await run();
    const r = await runInTty(['delete', d], 'y\n');
    expect(r.output).toContain('This permanently deletes:');
    expect(r.code, r.output).toBe(0);
    expect(await exists(d)).toBe(false);
  });
});

describeWithFixtures('delete: a run exported from a real fixture', () => {
  it('is recognised and deleted; its source file is untouched', async () => {
    const file = fixture('file-changes--suite.baseline.jsonl');
    const before = await readFile(file, 'utf8');
    const out = join(tmp, 'fixture-run');
    expect((await runCli(['export', file, '--out', out])).code).toBe(0);
    const r = await runCli(['delete', out, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(await exists(out)).toBe(false);
    expect(await readFile(file, 'utf8')).toBe(before);
  });
});
