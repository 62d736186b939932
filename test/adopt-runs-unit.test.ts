/**
 * The pieces of runs-only adoption (src/sync/adopt-tree.ts, adopt-runs.ts) on their own: the strict
 * reading of raw tree objects, where a path belongs in either branch layout, and the check that
 * runs before any adoption moves the results ref (a tip that lost a run directory or a catalog
 * line is named).
 */
import { describe, expect, it } from 'vitest';
import { parseTreeStrict, TreeRefusal } from '../src/sync/adopt-tree.js';
import { lostRuns, placeOf } from '../src/sync/adopt-runs.js';
import { openRepo } from '../src/git/index.js';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun, RESULTS_REF } from './sync-helpers.js';

isolateGitForSuite();

const ID = 'a'.repeat(40);
const raw = (...entries: [string, string][]): Buffer =>
  Buffer.concat(entries.map(([mode, name]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(ID, 'hex')])));
const reason = (r: unknown): string => (r instanceof TreeRefusal ? r.reason : 'accepted');

describe('parseTreeStrict', () => {
  it('reads a well-formed tree (git order: a tree sorts as if its name ended in /)', () => {
    const r = parseTreeStrict(raw(['100644', 'a.json'], ['40000', 'a'], ['100755', 'run.sh']), 20, '');
    // "a.json" < "a/" bytewise ('.' is 0x2e, '/' is 0x2f)
    expect(reason(r)).toBe('accepted');
    expect((r as { name: string }[]).map((e) => e.name)).toEqual(['a.json', 'a', 'run.sh']);
  });

  it.each([
    ['a duplicate entry', raw(['100644', 'x'], ['100644', 'x']), 'twice (duplicate entries)'],
    ['entries out of order', raw(['100644', 'b'], ['100644', 'a']), 'out of order'],
    ['"..", as a name', raw(['100644', '..']), '".."'],
    ['".git", as a name', raw(['40000', '.git']), '.git'],
    ['a symbolic link', raw(['120000', 'l']), 'symbolic link'],
    ['a submodule', raw(['160000', 's']), 'submodule'],
    ['a zero-padded mode', raw(['040000', 'd']), 'mode "040000"'],
    ['a truncated entry', Buffer.from('100644 x\0abc'), 'truncated'],
  ])('refuses %s', (_what, data, expected) => {
    expect(reason(parseTreeStrict(data, 20, 'run'))).toContain(expected);
  });
});

describe('placeOf', () => {
  it.each([
    ['2026-03-14T10-00-00-000Z/summary.json', 'run 2026-03-14T10-00-00-000Z'],
    ['2026-03-14T10-00-00-000Z/.internal/index.jsonl', 'run 2026-03-14T10-00-00-000Z'],
    ['runs/demo/2026-03-14T10-00-00-000Z/benchmark.json', 'run runs/demo/2026-03-14T10-00-00-000Z'],
    ['runs/demo/2026-03-14/2026-03-14T10-00-00-000Z/index.jsonl', 'run runs/demo/2026-03-14/2026-03-14T10-00-00-000Z'],
    ['metadata/runs/demo/2026-03-14T10-00-00-000Z/tags.json', 'overlay runs/demo/2026-03-14T10-00-00-000Z'],
    ['.indexes/agentv-results.2026-03-14.jsonl', 'catalog'],
    ['.gitattributes', 'attributes'],
    ['.cache/results-index.json', 'cache'],
    ['README', 'outside'],
    ['.github/workflows/x.yml', 'outside'],
    ['metadata/runs/demo/2026-03-14T10-00-00-000Z/notes.sh', 'outside'],
    ['runs/demo/file.json', 'outside'],
  ])('%s is %s', (path, expected) => {
    const p = placeOf(path);
    expect('run' in p ? `${p.kind} ${p.run}` : p.kind).toBe(expected);
  });
});

describe('lostRuns', () => {
  it('names a run whose directory or catalog line a new tip lacks, and nothing when none is lost', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    const first = await publishRun(a, { experiment: 'one', rows: 2 }, { push: false });
    await publishRun(a, { experiment: 'two', rows: 2, minute: 1 }, { push: false });
    const repo = await openRepo(a);
    const tip = await git(a, ['rev-parse', RESULTS_REF]);
    expect(await lostRuns(repo, tip, tip)).toEqual([]);
    const runDir = (await git(a, ['ls-tree', '--name-only', tip])).split('\n').find((n) => !n.startsWith('.'))!;
    // Without that directory.
    await git(a, ['read-tree', tip], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    await git(a, ['rm', '-r', '-q', '--cached', runDir], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    const tree = await git(a, ['write-tree'], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    const without = await git(a, ['commit-tree', tree, '-p', tip, '-m', 'without']);
    const lost = await lostRuns(repo, tip, without);
    expect(lost).toContain(runDir);
    // Without the catalog line (its directory kept): named by run id and catalog file.
    const catalog = (await git(a, ['ls-tree', '-r', '--name-only', tip, '.indexes/'])).split('\n').find((p) => p.includes('agentv-results.'))!;
    const lines = (await git(a, ['show', `${tip}:${catalog}`])).split('\n').filter((l) => !l.includes(first.runId));
    const blob = await git(a, ['hash-object', '-w', '--stdin'], { input: `${lines.join('\n')}\n` });
    await git(a, ['read-tree', tip], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    await git(a, ['update-index', '--cacheinfo', `100644,${blob},${catalog}`], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    const tree2 = await git(a, ['write-tree'], { env: { GIT_INDEX_FILE: `${a}/.git/adopt-test-index` } });
    const unlisted = await git(a, ['commit-tree', tree2, '-p', tip, '-m', 'unlisted']);
    expect(await lostRuns(repo, tip, unlisted)).toEqual([`${first.runId} (catalog ${catalog})`]);
  });
});
