// writeTree: build a tree from a base tree plus changes with a throw-away index file. Used when the
// result is a tree (e.g. a merge resolution to be committed with commitTree and two parents).
// The repository's own index is never read or written: GIT_INDEX_FILE points into a private temp
// directory. The number of git processes is constant (at most 5), whatever the number of files.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normalizeChanges, type FileChange, type NormalizedChange } from './tree-paths.js';
import { assertNotOption, gitIn, text, zeroId, type Repo } from './repo.js';
import { withTempDir } from './temp.js';
import { GitOutputError } from '../errors/git-errors.js';

export interface WriteTreeOptions {
  /** Tree-ish the changes apply to (a tree or commit id, a ref); null = start from an empty tree. */
  base: string | null;
  /** Deletes apply first (a directory delete removes everything below it), then writes. */
  changes: Iterable<FileChange>;
}

// The temporary index must not drag in features that write beside the repository's own index
// (split index: sharedindex files in .git) or talk to a filesystem monitor about the user's worktree.
const TEMP_INDEX_CONFIG = {
  'core.splitIndex': 'false',
  'core.untrackedCache': 'false',
  'core.fsmonitor': 'false',
};

const WRITE_CONCURRENCY = 32;

export async function writeTree(repo: Repo, opts: WriteTreeOptions): Promise<string> {
  const changes = normalizeChanges(opts.changes);
  if (opts.base !== null) assertNotOption(opts.base, 'base tree');
  return withTempDir('index', async (dir) => {
    const run = (args: string[], input?: string | Buffer) =>
      gitIn(repo, args, {
        cwd: dir,
        env: { GIT_INDEX_FILE: join(dir, 'index') },
        config: TEMP_INDEX_CONFIG,
        ...(input === undefined ? {} : { input }),
      });

    await run(opts.base === null ? ['read-tree', '--empty'] : ['read-tree', opts.base]);
    const removals = await filesToRemove(repo, opts.base, changes);
    const writes = changes.filter((c): c is Extract<NormalizedChange, { kind: 'write' }> => c.kind === 'write');
    const shas = await hashBlobs(dir, writes, (input) => run(['hash-object', '-w', '--no-filters', '--stdin-paths'], input));

    const zero = zeroId(repo);
    const lines: string[] = removals.map((p) => `0 ${zero}\t${p}\0`);
    for (const [i, w] of writes.entries()) lines.push(`${w.mode} ${shas[i] as string}\t${w.path}\0`);
    if (lines.length > 0) await run(['update-index', '-z', '--index-info'], lines.join(''));
    return text((await run(['write-tree'])).stdout);
  });
}

/** Index entries to drop: every file at or below each deleted path, as found in the base tree. */
async function filesToRemove(repo: Repo, base: string | null, changes: NormalizedChange[]): Promise<string[]> {
  const deleted = changes.filter((c) => c.kind === 'delete').map((c) => c.path);
  if (base === null || deleted.length === 0) return [];
  const r = await gitIn(repo, ['--literal-pathspecs', 'ls-tree', '-r', '-z', '--full-tree', '--name-only', base, '--', ...deleted]);
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((p) => p.length > 0);
}

/** Stages blob contents as files and hashes all of them with a single hash-object process. */
async function hashBlobs(
  dir: string,
  writes: Extract<NormalizedChange, { kind: 'write' }>[],
  hash: (input: string) => Promise<{ stdout: Buffer }>,
): Promise<string[]> {
  if (writes.length === 0) return [];
  const files = writes.map((_, i) => join(dir, `blob-${i}`));
  for (let i = 0; i < writes.length; i += WRITE_CONCURRENCY) {
    await Promise.all(writes.slice(i, i + WRITE_CONCURRENCY).map((w, j) => writeFile(files[i + j] as string, w.data)));
  }
  // --no-filters: bytes are stored exactly as given, whatever attributes/autocrlf say.
  const shas = text((await hash(`${files.join('\n')}\n`)).stdout).split('\n');
  if (shas.length !== writes.length) throw new GitOutputError(`hash-object returned ${shas.length} ids for ${writes.length} files`);
  return shas;
}
