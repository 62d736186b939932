import { lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { driverKindForPath, ownedMergeKind, rowIdentityForPath, catalogRowIdentity, indexRowIdentity, runMergeDriver } from '../src/merge/index.js';

const row = (id: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ projection_identity: { id }, test_id: id, ...extra });
const file = (...lines: string[]): string => lines.map((line) => `${line}\n`).join('');
const j = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentv-merge-driver-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Write the three versions the way git does (%O %A %B) and return their paths. */
async function stage(base: string | Uint8Array, ours: string | Uint8Array, theirs: string | Uint8Array) {
  const paths = { base: join(dir, 'O'), ours: join(dir, 'A'), theirs: join(dir, 'B') };
  await writeFile(paths.base, base);
  await writeFile(paths.ours, ours);
  await writeFile(paths.theirs, theirs);
  return paths;
}

describe('runMergeDriver', () => {
  it('refuses a symbolic link at %A, %O or %B and never writes through one (a decoy, never a system file)', async () => {
    const decoy = join(dir, 'decoy.jsonl');
    const decoyBytes = file(row('decoy'));
    await writeFile(decoy, decoyBytes);
    for (const at of ['ours', 'base', 'theirs'] as const) {
      for (const name of ['O', 'A', 'B']) await rm(join(dir, name), { force: true });
      const p = await stage(file(row('a')), file(row('a'), row('o')), file(row('a'), row('t')));
      await rm(p[at]);
      await symlink(decoy, p[at]);
      await expect(runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'index.jsonl')).rejects.toThrow(/symbolic link/);
      expect(await readFile(decoy, 'utf8')).toBe(decoyBytes);
      expect((await lstat(p[at])).isSymbolicLink()).toBe(true);
    }
    // Nothing left beside them (no temporary file of the driver's).
    expect((await readdir(dir)).sort()).toEqual(['A', 'B', 'O', 'decoy.jsonl']);
  });

  it('replaces %A with a new file (a rename), so the merged bytes never go through what %A names', async () => {
    const p = await stage(file(row('a')), file(row('a'), row('o')), file(row('a'), row('t')));
    const before = (await lstat(p.ours)).ino;
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'index.jsonl')).toBe(0);
    expect(await readFile(p.ours, 'utf8')).toBe(file(row('a'), row('o'), row('t')));
    expect((await lstat(p.ours)).ino).not.toBe(before);
    expect((await readdir(dir)).sort()).toEqual(['A', 'B', 'O']);
  });

  it('jsonl: writes the clean merge into %A, exits 0, leaves %O and %B alone', async () => {
    const base = file(row('a'), row('b'));
    const theirs = file(row('a'), row('b'), row('t'));
    const p = await stage(base, file(row('b'), row('o')), theirs);
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'runs/e/2026-01-01/ts/index.jsonl')).toBe(0);
    expect(await readFile(p.ours, 'utf8')).toBe(file(row('b'), row('o'), row('t')));
    expect(await readFile(p.base, 'utf8')).toBe(base);
    expect(await readFile(p.theirs, 'utf8')).toBe(theirs);
  });

  it('jsonl: exits 1 on a conflict and writes both versions between git-style markers', async () => {
    const p = await stage(file(row('a')), file(row('a', { s: 1 }), row('o')), file(row('a', { s: 2 })));
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'index.jsonl')).toBe(1);
    expect(await readFile(p.ours, 'utf8')).toBe(
      ['<<<<<<< ours', row('a', { s: 1 }), '||||||| base', row('a'), '=======', row('a', { s: 2 }), '>>>>>>> theirs', row('o'), ''].join('\n'),
    );
  });

  it('json: writes the merged overlay, exits 0', async () => {
    const p = await stage(
      j({ entries: {} }),
      j({ entries: { t1: { feedback: 'x', reviewer: 'ann' } } }),
      j({ entries: { t2: { feedback: 'y', reviewer: 'bob' } } }),
    );
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'runs/e/d/ts/feedback.json')).toBe(0);
    expect(JSON.parse(await readFile(p.ours, 'utf8'))).toEqual({
      entries: { t1: { feedback: 'x', reviewer: 'ann' }, t2: { feedback: 'y', reviewer: 'bob' } },
    });
  });

  it('json: exits 1 on a conflict and keeps both values between markers', async () => {
    const p = await stage(j({ title: 'a' }), j({ title: 'ours' }), j({ title: 'theirs' }));
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'feedback.json')).toBe(1);
    const text = await readFile(p.ours, 'utf8');
    expect(text).toBe('{\n<<<<<<< ours\n  "title": "ours"\n||||||| base\n  "title": "a"\n=======\n  "title": "theirs"\n>>>>>>> theirs\n}\n');
  });

  it('json: an unparseable side keeps every version in %A', async () => {
    const p = await stage(j({ a: 1 }), j({ a: 2 }), '{ broken');
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'tags.json')).toBe(1);
    const text = await readFile(p.ours, 'utf8');
    expect(text).toContain('"a": 2');
    expect(text).toContain('{ broken');
    expect(text.startsWith('<<<<<<< ours\n')).toBe(true);
    expect(text.endsWith('>>>>>>> theirs\n')).toBe(true);
  });

  it('picks the merge from the path when it recognizes it, overriding the installed kind', async () => {
    const p = await stage(file(row('a')), file(row('a'), row('o')), file(row('a'), row('t')));
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'runs/e/d/ts/index.jsonl')).toBe(0);
    expect(await readFile(p.ours, 'utf8')).toBe(file(row('a'), row('o'), row('t')));
  });

  it('falls back to the installed kind for a path it does not recognize', async () => {
    const p = await stage('', file(row('o')), file(row('t')));
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'custom/results.jsonl')).toBe(0);
    expect(await readFile(p.ours, 'utf8')).toBe(file(row('o'), row('t')));
  });

  it('treats an empty %O as "added on both sides", and a missing %O likewise', async () => {
    const p = await stage('', j({ tags: ['x'] }), j({ tags: ['y'] }));
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'other.json')).toBe(0);
    expect(JSON.parse(await readFile(p.ours, 'utf8'))).toEqual({ tags: ['x', 'y'] });

    const q = await stage('', file(row('o')), file(row('t')));
    await rm(q.base);
    expect(await runMergeDriver('jsonl', q.base, q.ours, q.theirs, 'index.jsonl')).toBe(0);
    expect(await readFile(q.ours, 'utf8')).toBe(file(row('o'), row('t')));
  });

  it('catalog files use run_id identity: one run published differently on both sides conflicts', async () => {
    const line = (passRate: number) => JSON.stringify({ run_id: 'e/2026-01-01T00-00-00Z', pass_rate: passRate });
    const p = await stage('', file(line(0.5)), file(line(0.7)));
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'catalog/2026-01-01.jsonl')).toBe(1);
    const text = await readFile(p.ours, 'utf8');
    expect(text).toContain(line(0.5));
    expect(text).toContain(line(0.7));
  });

  it('tags.json: a union that breaks the tag limit is a conflict with every version kept', async () => {
    const tags = (prefix: string) => Array.from({ length: 15 }, (_, i) => `${prefix}${i}`);
    const p = await stage(j({ tags: [] }), j({ tags: tags('o') }), j({ tags: tags('t') }));
    expect(await runMergeDriver('json', p.base, p.ours, p.theirs, 'runs/e/d/ts/tags.json')).toBe(1);
    const text = await readFile(p.ours, 'utf8');
    expect(text).toContain('"o14"');
    expect(text).toContain('"t14"');
    expect(text).toContain('<<<<<<< ours');
  });

  it('leaves %A untouched and exits 1 when a version is not UTF-8', async () => {
    const ours = file(row('o'));
    const p = await stage('', ours, new Uint8Array([0xff, 0xfe, 0x0a]));
    expect(await runMergeDriver('jsonl', p.base, p.ours, p.theirs, 'index.jsonl')).toBe(1);
    expect(await readFile(p.ours, 'utf8')).toBe(ours);
  });
});

describe('path ownership', () => {
  it('driverKindForPath recognizes our files in any directory', () => {
    expect(driverKindForPath('index.jsonl')).toBe('jsonl');
    expect(driverKindForPath('.agentv/results/exp/2026-03-14T10-32-00/index.jsonl')).toBe('jsonl');
    expect(driverKindForPath('catalog/2026-03-14.jsonl')).toBe('jsonl');
    expect(driverKindForPath('runs/e/d/ts/tags.json')).toBe('json');
    expect(driverKindForPath('feedback.json')).toBe('json');
    expect(driverKindForPath('runs/e/d/ts/summary.json')).toBeNull();
    expect(driverKindForPath('runs/e/d/ts/transcript-raw.jsonl')).toBeNull();
    expect(driverKindForPath('mytags.json')).toBeNull();
  });

  it('ownedMergeKind follows the results-branch layout exactly', () => {
    expect(ownedMergeKind('catalog/2026-03-14.jsonl')).toBe('jsonl');
    expect(ownedMergeKind('runs/exp/2026-03-14/2026-03-14T10-32-00/index.jsonl')).toBe('jsonl');
    expect(ownedMergeKind('runs/exp/2026-03-14/2026-03-14T10-32-00/tags.json')).toBe('json');
    expect(ownedMergeKind('runs/exp/2026-03-14/2026-03-14T10-32-00/feedback.json')).toBe('json');
    expect(ownedMergeKind('runs/exp/2026-03-14/2026-03-14T10-32-00/summary.json')).toBeNull();
    expect(ownedMergeKind('runs/exp/d/ts/suite/t1/attempt-1/transcript-raw.jsonl')).toBeNull();
    expect(ownedMergeKind('runs/exp/catalog/x.jsonl')).toBeNull();
    expect(ownedMergeKind('catalog/sub/2026-03-14.jsonl')).toBeNull();
    expect(ownedMergeKind('index.jsonl')).toBeNull();
    expect(ownedMergeKind('README.md')).toBeNull();
  });

  it('rowIdentityForPath: run_id for catalog files, projection identity for index files', () => {
    expect(rowIdentityForPath('catalog/2026-03-14.jsonl')).toBe(catalogRowIdentity);
    expect(rowIdentityForPath('runs/e/d/ts/index.jsonl')).toBe(indexRowIdentity);
  });
});
