/**
 * The catalog read kept on disk (branch-read/catalog-cache.ts): the first `list` after a
 * process starts answers from it, identical to a read of the branch; its key is the tip (a new
 * commit is read again), a torn or damaged file is never trusted, concurrent writers leave one
 * whole file, and nothing lands in the user's tree. Each `list` is its own process (what "first
 * load after start" means); the branch is 2,400 catalogued runs written with git plumbing.
 */
import { readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from './helpers/cli.js';
import { git, initRepo, isolateGitForSuite } from './helpers/git-fixtures.js';
import type { RunSummaryRow } from '../src/model/run-row.js';

isolateGitForSuite();

const BRANCH = 'agentv/results/v1';
const RUNS = 2400;
const PER_DAY = 200;

/** A catalog line: a listed run's row (one definition) without the day the catalog file names. */
type Line = Omit<RunSummaryRow, 'day'>;

function lines(): Line[] {
  const out: Line[] = [];
  for (let i = 0; i < RUNS; i++) {
    const iso = new Date(Date.UTC(2026, 0, 1 + Math.floor(i / PER_DAY)) + (i % PER_DAY) * 60_000).toISOString();
    const experiment = i % 3 === 0 ? 'beta' : 'alpha';
    const slug = iso.replace(/:/g, '-').replace('.', '-');
    out.push({
      run_id: `${experiment}/${slug}`,
      experiment,
      timestamp: iso,
      path: `${experiment}--${slug}`,
      targets: i % 2 ? ['m1', 'm2'] : ['m1'],
      total: 4,
      passed: i % 5,
      failed: 4 - (i % 5),
      pass_rate: (i % 5) / 4,
    });
  }
  return out;
}

const hashObject = async (repo: string, text: string) => git(repo, ['hash-object', '-w', '--stdin'], { input: Buffer.from(text) });
const mktree = async (repo: string, entries: string[]) => git(repo, ['mktree'], { input: Buffer.from(entries.join('')) });

/** Commits the catalog of `all` (and, for `tagged`, a run directory holding tags.json) on the results branch. */
async function writeBranch(repo: string, all: Line[], tagged: Map<string, string[]>, parent: string | null): Promise<string> {
  const byDay = new Map<string, string>();
  for (const l of all) byDay.set(l.timestamp.slice(0, 10), `${byDay.get(l.timestamp.slice(0, 10)) ?? ''}${JSON.stringify(l)}\n`);
  const indexEntries: string[] = [];
  for (const [day, text] of byDay) indexEntries.push(`100644 blob ${await hashObject(repo, text)}\tagentv-results.${day}.jsonl\n`);
  const root = [`040000 tree ${await mktree(repo, indexEntries)}\t.indexes\n`];
  for (const [path, tags] of tagged) {
    const tagsBlob = await hashObject(repo, JSON.stringify({ tags }));
    root.push(`040000 tree ${await mktree(repo, [`100644 blob ${tagsBlob}\ttags.json\n`])}\t${path}\n`);
  }
  const tree = await mktree(
    repo,
    root.sort((a, b) => (a.split('\t')[1]! < b.split('\t')[1]! ? -1 : 1)),
  );
  const commit = await git(repo, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', 'catalog']);
  await git(repo, ['update-ref', `refs/heads/${BRANCH}`, commit]);
  return commit;
}

interface Listed {
  total: number;
  matched: number;
  facets: { experiments: string[]; targets: string[] };
  runs: { run_id: string; tags: string[]; where: string; pass_rate: number }[];
}

async function list(repo: string, args: string[] = []): Promise<Listed> {
  const r = await spawnCli(['list', '--json', ...args], { cwd: repo });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

const cacheDir = (repo: string) => join(repo, '.git', 'agentv-results', 'catalog-reads');
const cacheFiles = async (repo: string) => (await readdir(cacheDir(repo)).catch(() => [] as string[])).sort();

describe('the catalog read kept on disk', () => {
  it('answers the first list of a new process as the branch does; a new tip, a torn file and two writers at once', async () => {
    const repo = await initRepo();
    await writeFile(join(repo, '.gitignore'), '');
    const all = lines();
    const newestFirst = [...all].reverse();
    // The newest run (in the head) and one past the head (offset 1,500) carry tags: read by tree id.
    const tagged = new Map([
      [newestFirst[0]!.path, ['baseline']],
      [newestFirst[1500]!.path, ['release']],
    ]);
    const first = await writeBranch(repo, all, tagged, null);

    // Two processes at once, nothing kept yet: both read the branch, one whole file is left, no temporary file.
    const [a, b] = await Promise.all([list(repo, ['--limit', '50']), list(repo, ['--limit', '50'])]);
    expect(b).toEqual(a);
    expect(await cacheFiles(repo)).toHaveLength(1);
    const [file] = await cacheFiles(repo);
    const path = join(cacheDir(repo), file!);
    const size = (await stat(path)).size;

    // What the branch holds, newest first, whichever way it is asked.
    const expectPage = (got: Listed, from: number, n: number) => {
      expect(got.total).toBe(RUNS);
      expect(got.runs.map((r) => r.run_id)).toEqual(newestFirst.slice(from, from + n).map((l) => l.run_id));
      expect(got.facets).toEqual({ experiments: ['alpha', 'beta'], targets: ['m1', 'm2'] });
    };
    expectPage(a, 0, 50);
    expect(a.matched).toBe(RUNS);
    expect(a.runs[0]).toMatchObject({ tags: ['baseline'], where: 'local', pass_rate: newestFirst[0]!.pass_rate });

    // A new process answers from the kept read: its head (the first page), all of it (past the head, a filter).
    expect(await list(repo, ['--limit', '50'])).toEqual(a);
    const past = await list(repo, ['--offset', '1490', '--limit', '20']);
    expectPage(past, 1490, 20);
    expect(past.runs[10]).toMatchObject({ run_id: newestFirst[1500]!.run_id, tags: ['release'] });
    const beta = await list(repo, ['--experiment', 'beta', '--limit', '5']);
    expect(beta.matched).toBe(RUNS / 3);
    expect(beta.runs.map((r) => r.run_id)).toEqual(
      newestFirst
        .filter((l) => l.experiment === 'beta')
        .slice(0, 5)
        .map((l) => l.run_id),
    );
    expect((await list(repo, ['--tag', 'release'])).runs.map((r) => r.run_id)).toEqual([newestFirst[1500]!.run_id]);

    // A torn file (cut short) and a damaged one (a byte of the head changed) are not trusted: the
    // branch is read again and the file replaced by a whole one.
    await truncate(path, Math.floor(size / 2));
    expect(await list(repo, ['--limit', '50'])).toEqual(a);
    expect((await stat(path)).size).toBe(size);
    const bytes = await readFile(path);
    const at = bytes.indexOf('"run_id":"') + '"run_id":"'.length;
    bytes[at] = 'z'.charCodeAt(0);
    await writeFile(path, bytes);
    expect(await list(repo, ['--limit', '50'])).toEqual(a);
    expect((await readFile(path)).equals(bytes)).toBe(false);

    // The tip moves: a new run is read (a new key), the old read is not used.
    const later = { ...all[all.length - 1]!, run_id: 'alpha/later', path: 'alpha--later', timestamp: '2027-01-01T00:00:00.000Z', experiment: 'gamma' };
    await writeBranch(repo, [...all, later], tagged, first);
    const moved = await list(repo, ['--limit', '3']);
    expect(moved.total).toBe(RUNS + 1);
    expect(moved.runs.map((r) => r.run_id)).toEqual(['alpha/later', ...newestFirst.slice(0, 2).map((l) => l.run_id)]);
    expect(moved.facets.experiments).toEqual(['alpha', 'beta', 'gamma']);
    expect(await cacheFiles(repo)).toHaveLength(2);

    // Under the git directory only: the user's tree is untouched.
    expect(await git(repo, ['status', '--porcelain', '--untracked-files=all'])).toBe('?? .gitignore');
  });
});
