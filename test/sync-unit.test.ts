/** Pure parts of sync: compare links, sync-branch names, backoff, the prefer-main resolver, tag argv, driver commands. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeTagRevision, mergeOwnedText } from '../src/merge/index.js';
import { appendOnlyMerge } from '../src/sync/append-merge.js';
import { compareUrl, parseHostedRemote, reviewHint } from '../src/sync/compare-link.js';
import { driverCommand, shellQuote } from '../src/merge/install.js';
import { plantJson, preferMainResolver } from '../src/sync/resolve-merger.js';
import { classifyPush } from '../src/git/index.js';
import { backoffDelay } from '../src/sync/push-branches.js';
import { hostSlug, normalizeSyncBranch, rand6, syncSuffix } from '../src/sync/sync-branch-log.js';
import { parseTagEdits } from '../src/cli/tag.js';

const BASE = 'agentv/results/v1';
const SYNC = 'agentv/results-sync/20260314T103200Z-ci-7-a1b2c3';

describe('compare links', () => {
  const github = `https://github.com/acme/evals/compare/${BASE}...${SYNC}?expand=1`;
  it.each([
    'https://github.com/acme/evals.git',
    'https://github.com/acme/evals',
    'https://x-access-token:ghs_secret@github.com/acme/evals.git',
    'git@github.com:acme/evals.git',
    'ssh://git@github.com/acme/evals.git',
    'ssh://git@github.com:22/acme/evals',
  ])('GitHub from %s', (url) => {
    expect(compareUrl(url, BASE, SYNC)).toBe(github);
  });

  it('never leaks credentials into the link', () => {
    expect(compareUrl('https://user:token@github.com/acme/evals.git', BASE, SYNC)).not.toContain('token');
  });

  it.each([
    ['https://gitlab.com/group/evals.git', 'https://gitlab.com/group/evals'],
    ['git@gitlab.com:group/sub/evals.git', 'https://gitlab.com/group/sub/evals'],
    ['ssh://git@gitlab.com/group/evals.git', 'https://gitlab.com/group/evals'],
    ['https://gitlab.example.com/platform/ml/evals.git', 'https://gitlab.example.com/platform/ml/evals'],
    ['ssh://git@gitlab.internal.corp:2222/team/evals.git', 'https://gitlab.internal.corp/team/evals'],
    ['git@gitlab.internal.corp:team/evals.git', 'https://gitlab.internal.corp/team/evals'],
  ])('GitLab from %s', (url, repo) => {
    expect(compareUrl(url, BASE, SYNC)).toBe(`${repo}/-/compare/${BASE}...${SYNC}`);
  });

  it.each([
    '/srv/git/results.git',
    '../remote.git',
    'git://127.0.0.1:9418/remote.git',
    'file:///tmp/remote.git',
    'https://example.com/acme/evals.git',
    'C:\\repos\\evals.git',
    'https://github.com/only-owner',
  ])('no link for %s', (url) => {
    expect(compareUrl(url, BASE, SYNC)).toBeNull();
  });

  it('parses hosts and paths', () => {
    expect(parseHostedRemote('git@github.com:acme/evals.git')).toEqual({ host: 'github', webHost: 'github.com', path: 'acme/evals' });
    expect(parseHostedRemote('https://GitLab.com/a/b/c.git/')).toEqual({ host: 'gitlab', webHost: 'gitlab.com', path: 'a/b/c' });
  });

  it('escapes odd characters in branch names but keeps slashes', () => {
    expect(compareUrl('git@github.com:a/b.git', 'agentv/results/v1', 'agentv/results-sync/x#1')).toBe(
      'https://github.com/a/b/compare/agentv/results/v1...agentv/results-sync/x%231?expand=1',
    );
  });

  it('gives git commands for other remotes', () => {
    expect(reviewHint('origin', BASE, SYNC)).toBe(`git fetch origin ${SYNC} ${BASE} && git diff origin/${BASE}...origin/${SYNC}`);
  });
});

describe('sync branch names', () => {
  it('is <YYYYMMDDTHHMMSSZ>-<host>-<rand6>', () => {
    const suffix = syncSuffix(new Date('2026-03-14T10:32:05.123Z'), 'ci-runner-7', 'a1b2c3');
    expect(suffix).toBe('20260314T103205Z-ci-runner-7-a1b2c3');
    expect(syncSuffix(new Date())).toMatch(/^\d{8}T\d{6}Z-[a-z0-9-]+-[a-z0-9]{6}$/);
  });

  it('slugs host names', () => {
    expect(hostSlug('CI_Runner.7.example.com')).toBe('ci-runner');
    expect(hostSlug('ip-10-0-0-1.ec2.internal')).toBe('ip-10-0-0-1');
    expect(hostSlug('***')).toBe('host');
    expect(hostSlug('a'.repeat(80))).toHaveLength(32);
  });

  it('random part is 6 characters of [a-z0-9]', () => {
    for (let i = 0; i < 50; i++) expect(rand6()).toMatch(/^[a-z0-9]{6}$/);
  });

  it('accepts the branch with or without prefix, rejects junk', () => {
    expect(normalizeSyncBranch('20260314T103205Z-ci-a1b2c3')).toBe('agentv/results-sync/20260314T103205Z-ci-a1b2c3');
    expect(normalizeSyncBranch('refs/heads/agentv/results-sync/x-1')).toBe('agentv/results-sync/x-1');
    expect(() => normalizeSyncBranch('agentv/results-sync/../main')).toThrow();
    expect(() => normalizeSyncBranch('-rf')).toThrow();
  });
});

describe('backoff', () => {
  const b = { baseMs: 100, capMs: 3000 };
  it('full jitter within an exponentially growing, capped ceiling', () => {
    expect(backoffDelay(1, b, () => 0.999)).toBe(99);
    expect(backoffDelay(3, b, () => 0.999)).toBe(399);
    expect(backoffDelay(10, b, () => 0.999)).toBe(2997);
    expect(backoffDelay(5, b, () => 0)).toBe(0);
  });
  it('scales with the measured round time (the slot), still capped', () => {
    expect(backoffDelay(1, b, () => 0.999, 400)).toBe(399);
    expect(backoffDelay(2, b, () => 0.5, 400)).toBe(400);
    expect(backoffDelay(6, b, () => 0.999, 400)).toBe(2997);
    expect(backoffDelay(1, b, () => 0.999, 10)).toBe(99); // never below the base
  });
});

describe('push classification', () => {
  const ref = (dst: string, reason: string) => ({ dst, status: 'remote-rejected' as const, summary: `[remote rejected] (${reason})`, reason });
  it('an atomic push that lost a race on the server is contention, not a failure', () => {
    const refs = [ref('refs/heads/a', 'atomic transaction failed'), ref('refs/heads/b', 'atomic transaction failed')];
    const stderr = "remote: error: cannot lock ref 'refs/heads/b': is at 1111 but expected 2222\nerror: failed to push some refs";
    expect(classifyPush(1, true, refs, stderr)).toBe('non-fast-forward');
    const withUpToDate = [
      { dst: 'refs/heads/a', status: 'up-to-date' as const, summary: '[up to date]', reason: null },
      ref('refs/heads/b', 'atomic transaction failed'),
    ];
    expect(classifyPush(1, true, withUpToDate, stderr)).toBe('non-fast-forward');
  });
  it('a hook that declines stays "other"', () => {
    const refs = [ref('refs/heads/a', 'atomic transaction failed'), ref('refs/heads/b', 'hook declined')];
    expect(classifyPush(1, true, refs, 'remote: results branch frozen')).toBe('other');
    expect(classifyPush(128, false, [], 'fatal: unable to connect to 127.0.0.1:9: Connection refused')).toBe('unreachable');
  });
});

describe('prefer-main resolver (sync --resolve)', () => {
  const PATH = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z/feedback.json';
  const doc = (entries: Record<string, string>, at: string) =>
    `${JSON.stringify({ entries: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, { feedback: v, reviewer: 'r', updated_at: at }])), updated_at: at }, null, 2)}\n`;
  const b = (s: string) => Buffer.from(s);

  it("takes main for the contested value and keeps the sync side's other additions", () => {
    const base = doc({ t1: 'x' }, '2026-03-14T10:00:00Z');
    const main = doc({ t1: 'decided' }, '2026-03-14T12:00:00Z');
    const side = doc({ t1: 'B', t2: 'other test' }, '2026-03-14T11:00:00Z');
    const r = preferMainResolver({ path: PATH, base: b(base), ours: b(main), theirs: b(side) });
    expect(r.action).toBe('write');
    const merged = JSON.parse((r as { data: Buffer }).data.toString());
    expect(merged.entries.t1.feedback).toBe('decided');
    expect(merged.entries.t2.feedback).toBe('other test');
    expect(merged.updated_at).toBe('2026-03-14T12:00:00Z');
  });

  it('clean merges stay clean merges', () => {
    const base = doc({}, '2026-03-14T10:00:00Z');
    const r = preferMainResolver({
      path: PATH,
      base: b(base),
      ours: b(doc({ a: '1' }, '2026-03-14T10:00:00Z')),
      theirs: b(doc({ c: '2' }, '2026-03-14T10:00:00Z')),
    });
    expect(Object.keys(JSON.parse((r as { data: Buffer }).data.toString()).entries).sort()).toEqual(['a', 'c']);
  });

  it('jsonl: the contested row follows main, other rows of the sync side are kept', () => {
    const P = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z/index.jsonl';
    const row = (id: string, score: number) => JSON.stringify({ projection_identity: { id }, test_id: id, score });
    const base = `${row('a', 0)}\n`;
    const main = `${row('a', 1)}\n`;
    const side = `${row('a', 2)}\n${row('b', 5)}\n`;
    const r = preferMainResolver({ path: P, base: b(base), ours: b(main), theirs: b(side) });
    expect((r as { data: Buffer }).data.toString()).toBe(`${row('a', 1)}\n${row('b', 5)}\n`);
  });

  it("files we do not own: main's whole file", () => {
    const P = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z/summary.json';
    expect(preferMainResolver({ path: P, base: b('1'), ours: b('2'), theirs: b('3') })).toEqual({ action: 'write', data: b('2') });
    expect(preferMainResolver({ path: P, base: b('1'), ours: null, theirs: b('3') })).toEqual({ action: 'delete' });
  });

  it('plantJson leaves a clean base alone and plants the sync value at conflicts', () => {
    expect(plantJson('{"a":1}', '{"a":1,"b":2}', '{"a":1}')).toBe('{"a":1}');
    expect(JSON.parse(plantJson('{"a":1}', '{"a":2}', '{"a":3}')!)).toEqual({ a: 3 });
    expect(plantJson('{"a":1}', 'not json', '{"a":3}')).toBeNull();
  });

  it('tag_revision is recomputed for the resolved document', () => {
    const P = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z/tags.json';
    const tags = (t: string[], at: string) => {
      const d = { tags: t, updated_at: at };
      return `${JSON.stringify({ ...d, tag_revision: computeTagRevision(d) }, null, 2)}\n`;
    };
    const r = preferMainResolver({
      path: P,
      base: b(tags(['a'], '2026-01-01T00:00:00Z')),
      ours: b(tags(['a', 'b'], '2026-01-02T00:00:00Z')),
      theirs: b(tags(['c'], '2026-01-03T00:00:00Z')),
    });
    const out = JSON.parse((r as { data: Buffer }).data.toString());
    expect(out.tags).toEqual(['b', 'c']);
    expect(out.tag_revision).toBe(computeTagRevision({ tags: out.tags, updated_at: out.updated_at }));
  });
});

describe('tag edits', () => {
  it('reads the run id, then +add / -remove in the order typed; an unknown --option is refused', () => {
    expect(parseTagEdits(['exp/ts', '+baseline', '-old', '+release-2.1'])).toEqual({ runId: 'exp/ts', add: ['baseline', 'release-2.1'], remove: ['old'] });
    expect(parseTagEdits(['exp/ts'])).toEqual({ runId: 'exp/ts', add: [], remove: [] });
    expect(() => parseTagEdits(['exp/ts', 'oops'])).toThrow(/neither \+name/);
    expect(() => parseTagEdits(['exp/ts', '--no-psuh'])).toThrow(/unknown option --no-psuh/);
  });
});

describe('driver command', () => {
  it("runs this package's entry by absolute path, quoted for the shell", () => {
    expect(driverCommand('jsonl', '/opt/agentv/dist/cli/main.js')).toBe('node /opt/agentv/dist/cli/main.js merge-driver jsonl %O %A %B %P');
    expect(driverCommand('json', "/home/o'neil/my tools/main.js")).toBe(`node '/home/o'\\''neil/my tools/main.js' merge-driver json %O %A %B %P`);
    expect(shellQuote('$(rm -rf)')).toBe(`'$(rm -rf)'`);
  });
});

describe('append-only fast path', () => {
  const INDEX = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z/index.jsonl';
  const CATALOG = 'catalog/2026-03-14.jsonl';
  // Rows drawn from a small id space so that collisions (re-added, changed, duplicated rows) happen.
  const rowArb = fc
    .record({ id: fc.integer({ min: 0, max: 40 }), v: fc.integer({ min: 0, max: 2 }), opaque: fc.boolean() })
    .map(({ id, v, opaque }) =>
      opaque && id === 0 ? 'not json' : JSON.stringify({ projection_identity: { id: `r${id}` }, test_id: `t${id}`, run_id: `e/r${id}`, v }),
    );
  const fileArb = fc.array(rowArb, { maxLength: 6 });
  const textOf = (rows: string[], crlf: boolean, blank: boolean) => rows.map((r) => r + (crlf ? '\r\n' : '\n')).join(blank ? '\n' : '');

  it("when it applies, it gives exactly the general merge's bytes", () => {
    let applied = 0;
    fc.assert(
      fc.property(fileArb, fileArb, fileArb, fc.boolean(), fc.boolean(), (base, addOurs, addTheirs, crlf, blank) => {
        for (const path of [INDEX, CATALOG]) {
          const b = textOf(base, false, false);
          const o = textOf([...base, ...addOurs], crlf, blank);
          const t = textOf([...base, ...addTheirs], false, blank);
          const input = { path, base: Buffer.from(b), ours: Buffer.from(o), theirs: Buffer.from(t) };
          const fast = appendOnlyMerge(input);
          if (fast === null) continue;
          applied++;
          const general = mergeOwnedText('jsonl', path, b, o, t);
          expect(general.ok).toBe(true);
          expect((fast as { data: Buffer }).data.toString('utf8')).toBe(general.text);
        }
      }),
      { numRuns: 400 },
    );
    expect(applied).toBeGreaterThan(20);
  });

  it('applies to plain appends and stands aside otherwise', () => {
    const r = (id: string) => JSON.stringify({ projection_identity: { id }, test_id: id });
    const base = `${r('a')}\n`;
    const hit = appendOnlyMerge({ path: INDEX, base: Buffer.from(base), ours: Buffer.from(`${base}${r('b')}\n`), theirs: Buffer.from(`${base}${r('c')}\n`) });
    expect((hit as { data: Buffer }).data.toString()).toBe(`${r('a')}\n${r('b')}\n${r('c')}\n`);
    expect(
      appendOnlyMerge({ path: INDEX, base: Buffer.from(base), ours: Buffer.from(`${base}${r('b')}\n`), theirs: Buffer.from(`${base}${r('b')}\n`) }),
    ).toBeNull();
    expect(appendOnlyMerge({ path: INDEX, base: Buffer.from(base), ours: Buffer.from(`${r('b')}\n`), theirs: Buffer.from(`${base}${r('c')}\n`) })).toBeNull();
    expect(appendOnlyMerge({ path: 'runs/x/summary.json', base: Buffer.from('a'), ours: Buffer.from('ab'), theirs: Buffer.from('ac') })).toBeNull();
  });
});
