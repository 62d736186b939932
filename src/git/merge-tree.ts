// Three-way merge of two commits without a worktree or index: `git merge-tree --write-tree -z`.
//
// Why the empty cwd (ARCHITECTURE.md rule 6): git 2.39 does not read .gitattributes from the trees being
// merged; it reads them from the process cwd, then $GIT_DIR/info/attributes, then
// core.attributesFile. Run from a user's checkout, their attributes (merge=union, custom drivers)
// would decide how our results merge. We run from a fresh empty directory and also point
// core.attributesFile at a path that does not exist, so only the repository's own info/attributes
// (deliberately installed, e.g. by `drivers install`) can still apply. Conflicts are then resolved
// in TypeScript from the stage entries reported here.
import { join } from 'node:path';
import { assertNotOption, gitIn, type Repo } from './repo.js';
import { withTempDir } from './temp.js';
import { assertGitVersion } from './version.js';
import { GitOutputError } from '../errors/git-errors.js';

export interface StageEntry {
  mode: string;
  sha: string;
}

export interface MergeConflict {
  path: string;
  /** Stage 1 (merge base), 2 (ours), 3 (theirs); a missing stage means the path is absent there. */
  stages: { base?: StageEntry; ours?: StageEntry; theirs?: StageEntry };
}

export interface MergeMessage {
  paths: string[];
  /** Stable machine-readable type, e.g. "Auto-merging", "CONFLICT (contents)", "CONFLICT (modify/delete)". */
  type: string;
  message: string;
}

export interface MergeTreeResult {
  clean: boolean;
  /** The merged tree; for an unclean merge, conflicted files hold git's conflict markers. */
  tree: string;
  conflicts: MergeConflict[];
  /** Human-readable messages, one per line. */
  messages: string;
  details: MergeMessage[];
}

export interface MergeTreeOptions {
  /** Merge commits with no common ancestor (two machines that each created the branch). */
  allowUnrelatedHistories?: boolean;
}

const STAGE_NAMES = { '1': 'base', '2': 'ours', '3': 'theirs' } as const;

export async function mergeTree(repo: Repo, ours: string, theirs: string, opts: MergeTreeOptions = {}): Promise<MergeTreeResult> {
  assertNotOption(ours, 'ours');
  assertNotOption(theirs, 'theirs');
  await assertGitVersion();
  const args = ['merge-tree', '--write-tree', '-z', '--messages'];
  if (opts.allowUnrelatedHistories) args.push('--allow-unrelated-histories');
  args.push(ours, theirs);
  return withTempDir('merge', async (emptyCwd) => {
    const r = await gitIn(repo, args, {
      cwd: emptyCwd,
      okCodes: [0, 1],
      env: { GIT_ATTR_NOSYSTEM: '1' },
      config: { 'core.attributesFile': join(emptyCwd, 'no-such-attributes-file') },
    });
    return parseMergeTreeOutput(r.stdout.toString('utf8'), r.code === 0);
  });
}

/**
 * -z output: "<tree> NUL", then (only when unclean) "<mode> SP <sha> SP <stage> TAB <path> NUL"...,
 * an empty field, then messages: "<n> NUL <path>{n} NUL <type> NUL <message> NUL" repeated.
 */
export function parseMergeTreeOutput(out: string, clean: boolean): MergeTreeResult {
  const fields = out.split('\0');
  const tree = fields[0] ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new GitOutputError(`unexpected merge-tree output ${JSON.stringify(out.slice(0, 100))}`);
  const byPath = new Map<string, MergeConflict>();
  let i = 1;
  if (!clean) {
    for (; i < fields.length && fields[i] !== ''; i++) {
      const f = fields[i] as string;
      const m = /^(\d+) ([0-9a-f]+) ([123])\t(.*)$/s.exec(f);
      if (!m) throw new GitOutputError(`unexpected merge-tree conflict record ${JSON.stringify(f)}`);
      const [, mode = '', sha = '', stage = '1', path = ''] = m;
      let c = byPath.get(path);
      if (!c) {
        c = { path, stages: {} };
        byPath.set(path, c);
      }
      c.stages[STAGE_NAMES[stage as '1' | '2' | '3']] = { mode, sha };
    }
  }
  i++; // the empty field that ends the conflict list
  const details: MergeMessage[] = [];
  while (i < fields.length && fields[i] !== '') {
    const n = Number(fields[i]);
    if (!Number.isInteger(n)) break;
    const paths = fields.slice(i + 1, i + 1 + n);
    const type = fields[i + 1 + n] ?? '';
    const message = (fields[i + 2 + n] ?? '').replace(/\n$/, '');
    details.push({ paths, type, message });
    i += n + 3;
  }
  return {
    clean,
    tree,
    conflicts: [...byPath.values()],
    messages: details.map((d) => d.message).join('\n'),
    details,
  };
}
