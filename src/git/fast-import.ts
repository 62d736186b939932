// writeCommit: one commit, one `git fast-import` process, one pack (measured: 2,000 files in
// ~0.13 s versus seconds for one process per blob). Nothing outside the object store changes.
//
// How no visible ref moves: fast-import can only build a commit "on" a branch, and it writes its
// branches when the stream ends. We name a unique scratch branch (refs/agentv-tmp/<pid>-<random>),
// ask fast-import for the commit id with `get-mark` and for the root tree with `ls`, then `reset` that
// branch with no `from`: a branch reset to nothing is simply not written. So the scratch ref never
// exists on disk, not even for a moment, and a crash cannot leave it behind. The caller publishes
// the commit with a compare-and-swap update (refs.ts). The new objects are unreachable until then;
// git only prunes unreachable objects older than gc.pruneExpire (2 weeks), far beyond that window.
import { randomBytes } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { GitArgumentError, GitError, GitOutputError } from '../errors/git-errors.js';
import { normalizeIdent, normalizeMessage, identLine, type Ident, type NormalizedIdent } from './ident.js';
import { assertValidPath, collect, normalizeChanges, quotePath, type FileChange, type NormalizedChange } from './tree-paths.js';
import type { Repo } from './repo.js';
import { spawnGit } from './runner.js';
import { noteRefWrite } from './ref-snapshot.js';
import { absentAs } from '../errors/errors.js';
import { PrivateObjects } from './private-objects.js';

export interface WriteCommitOptions {
  /** First parent, and the tree the changes apply to. null = a root commit starting from an empty tree. */
  parent: string | null;
  /** Further parents (a merge commit). The tree still starts from `parent`'s tree. */
  mergeParents?: string[];
  /** Paths to write or delete relative to the parent's tree; every other path is kept as is. */
  files: Iterable<FileChange> | AsyncIterable<FileChange>;
  message: string;
  author: Ident;
  /** Defaults to the author. */
  committer?: Ident;
  /** Start from an empty tree (history still links to `parent`): the commit holds exactly `files`. */
  deleteAll?: boolean;
  /**
   * Start from this existing tree instead of `parent`'s (e.g. the tree merge-tree wrote for a merge):
   * the commit's tree is `baseTree` plus `files`, with any parents. Saves writing a scratch commit
   * of the tree first.
   */
  baseTree?: string;
  /**
   * Existing trees to graft at these paths (`M 040000 <tree> <path>`): the archive reuses a run's
   * tree object as is, so not one blob or tree is rewritten.
   */
  trees?: { path: string; tree: string }[];
  /**
   * Instead of `parent`, first write this root commit (an empty tree) in the same stream and build
   * on it: a branch's first commit costs one git process, not two. `parent` must be null.
   */
  onRoot?: { message: string; author: Ident };
}

export interface WrittenCommit {
  commit: string;
  tree: string;
  /** With `onRoot`: the root commit written first. */
  root?: string;
}

/**
 * glibc's malloc gives freed memory at the top of the heap back to the kernel once more than
 * `trim_threshold` (128 KiB by default) is free there. fast-import sets up and tears down ~256 KiB
 * of zlib state for every object; when nothing longer-lived sits above it (a stream of similar
 * blobs that delta against each other: transcripts), each object's state is handed back and
 * faulted in again. Measured here on 598 transcripts: 0.53 s (0.33 s of it in the kernel, 30,000
 * page faults) against 0.07 s with the threshold raised; other streams are unaffected. The objects
 * written are the same. Other C libraries ignore the variable; a user's own tunables still apply.
 */
export function fastImportEnv(inherited: string | undefined = process.env.GLIBC_TUNABLES): { GLIBC_TUNABLES: string } {
  // Ours first: a later setting of the same tunable (the user's) wins.
  return { GLIBC_TUNABLES: ['glibc.malloc.trim_threshold=33554432', inherited].filter(Boolean).join(':') };
}

/** Stream is flushed to git in chunks of about this size, awaiting backpressure between them. */
const CHUNK_BYTES = 1 << 20;
/** Offered blobs are handed to git in chunks of about this size, without waiting (see offer). */
const OFFER_BYTES = 1 << 18;
const REV = /^[^\s\0]+$/;

/** How a fast-import stream packs what it is given. */
export interface FastImportChoice {
  /**
   * Delta-compress each blob against the blob sent just before it (fast-import's default, true).
   * false (`pack.depth=0`): each blob is only deflated. fast-import deltas against the previous
   * object alone, so a stream of unlike files (a run's grading, metrics, answers in turn) gains
   * about 1% in size for about a third more of git's time; a stream of like files (transcripts)
   * gains more and keeps it.
   */
  deltas?: boolean;
  /**
   * Write into a private object directory inside the repository (`<git dir>/agentv-results/`),
   * reading the repository's own objects through it; the packs move into the repository's object
   * store only when a commit is written. A session closed without a commit (a publish refused after
   * its blobs were offered) leaves nothing behind.
   */
  privateObjects?: boolean;
}

/**
 * One `git fast-import` process: blobs may be offered to it early (git hashes and packs them while
 * the caller goes on), then one commit written on it (or none: close). writeCommit is a session
 * started for one commit.
 */
export class FastImportSession {
  private readonly proc: ReturnType<typeof spawnGit>;
  private readonly out: Buffer[] = [];
  /** Offered blobs by identity: a commit naming the same Buffer refers to its mark. */
  private readonly marks = new Map<Buffer, number>();
  /** Marks 1 and 2 are the commits'. */
  private nextMark = 3;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private ended = false;

  /** The private object directory (privateObjects), removed when the session ends. */
  private readonly objects: PrivateObjects | null;

  private constructor(
    private readonly repo: Repo,
    choice: FastImportChoice,
  ) {
    noteRefWrite(repo);
    this.objects = choice.privateObjects ? PrivateObjects.make(repo) : null;
    this.proc = spawnGit(['fast-import', '--quiet', '--done', '--date-format=raw'], {
      gitDir: repo.gitDir,
      // Keep what fast-import wrote as one pack even when small. By default (< 100 objects, or the
      // user's transfer.unpackLimit) it spawns `unpack-objects` to explode the pack into loose files:
      // a second process per publish. Packs accumulate instead, and gcAuto() consolidates them
      // (gc.autoPackLimit) like it does after any fetch.
      config: { 'fastimport.unpackLimit': '0', ...(choice.deltas === false ? { 'pack.depth': '0' } : {}) },
      env: { ...fastImportEnv(), ...this.objects?.env() },
    });
    this.proc.stdout.on('data', (c: Buffer) => this.out.push(c));
  }

  static start(repo: Repo, choice: FastImportChoice = {}): FastImportSession {
    return new FastImportSession(repo, choice);
  }

  /**
   * Hand `data` to git as a blob now, without waiting: it is queued in memory and written as the
   * event loop turns, while the caller goes on. A commit on this session that writes the same Buffer
   * names the blob instead of sending its bytes again. A blob no commit names stays unreachable
   * (git prunes such objects after gc.pruneExpire, two weeks).
   */
  offer(data: Buffer): void {
    if (this.ended || this.marks.has(data)) return;
    const mark = this.nextMark++;
    this.marks.set(data, mark);
    this.queue(Buffer.from(`blob\nmark :${mark}\ndata ${data.length}\n`, 'utf8'));
    this.queue(data);
    this.queue(Buffer.from('\n'));
    if (this.pendingBytes >= OFFER_BYTES) this.send();
  }

  /**
   * What is queued, handed to the pipe now without waiting for it to drain: the stream keeps what
   * the pipe cannot take yet and writes it as the event loop turns. A git process that went away is
   * found by the commit's first write, which waits.
   */
  private send(): void {
    if (this.pendingBytes === 0) return;
    const pieces = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const stdin = this.proc.stdin;
    if (stdin.destroyed || stdin.writableEnded) return;
    // Corked: the pieces go out as one gathered write, not copied into one buffer first.
    stdin.cork();
    for (const piece of pieces) stdin.write(piece);
    stdin.uncork();
  }

  /** Hand what offers queued to git now (the caller is about to go on with other work). */
  flushOffers(): void {
    if (!this.ended) this.send();
  }

  private queue(buf: Buffer): void {
    this.pending.push(buf);
    this.pendingBytes += buf.length;
  }

  private take(): Buffer | null {
    if (this.pendingBytes === 0) return null;
    const chunk = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return chunk;
  }

  private async flush(): Promise<void> {
    const chunk = this.take();
    if (chunk !== null) await this.proc.write(chunk);
  }

  /**
   * End the session without a commit (a publish that stopped before committing): what was offered
   * is packed, unreachable. Safe to call again, and after a commit.
   */
  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      this.queue(Buffer.from('done\n'));
      await this.flush();
      this.proc.stdin.end();
      await this.proc.exited;
    } catch {
      // best effort: nothing was committed on this session, so nothing of the caller's depends on it
      this.proc.stdin.destroy();
      // best effort: the failure is the one above; its exit is awaited so no git outlives the session
      await this.proc.exited.catch(() => undefined);
    } finally {
      await this.objects?.remove();
    }
  }

  /**
   * Writes a commit whose tree is `parent`'s tree plus `files`, without moving any ref and without
   * touching any worktree or index, and ends the session. All paths are validated (InvalidPathError)
   * before anything of the commit is sent, so a bad path commits nothing. Deterministic: same
   * inputs, same commit id.
   */
  async commit(opts: WriteCommitOptions): Promise<WrittenCommit> {
    if (this.ended) throw new GitArgumentError('this fast-import session has ended');
    let prepared: PreparedCommit;
    try {
      prepared = await prepareCommit(opts);
    } catch (err) {
      await this.close();
      throw err;
    }
    return this.commitPrepared(prepared);
  }

  /** @internal The commit as prepareCommit checked it (writeCommit does so before git starts). */
  async commitPrepared({ opts, changes, author, committer, message, root }: PreparedCommit): Promise<WrittenCommit> {
    if (this.ended) throw new GitArgumentError('this fast-import session has ended');
    this.ended = true;
    const scratch = `refs/agentv-tmp/${process.pid}-${randomBytes(6).toString('hex')}`;
    const proc = this.proc;
    try {
      // The commands are gathered as text and handed over in chunks: a commit of thousands of files
      // named by mark is thousands of short lines, not one await and one Buffer each.
      let text = '';
      const put = async (data?: Buffer) => {
        if (text.length > 0) this.queue(Buffer.from(text, 'utf8'));
        text = '';
        if (data !== undefined) this.queue(data);
        if (this.pendingBytes >= CHUNK_BYTES) await this.flush();
      };
      if (root) {
        // The root first, on the same scratch branch; the commit below names it with `from :2`.
        text += `commit ${scratch}\nmark :2\nauthor ${identLine(root.author)}\ncommitter ${identLine(root.author)}\ndata ${root.message.length}\n`;
        await put(root.message);
        text += '\n\n';
      }
      text += `commit ${scratch}\nmark :1\nauthor ${identLine(author)}\ncommitter ${identLine(committer)}\ndata ${message.length}\n`;
      await put(message);
      text += '\n';
      if (opts.parent !== null) text += `from ${opts.parent}\n`;
      else if (root) text += 'from :2\n';
      for (const p of opts.mergeParents ?? []) text += `merge ${p}\n`;
      if (opts.deleteAll) text += 'deleteall\n';
      // A tree as the root path replaces the whole tree (fast-import's "M 040000 <tree> \"\"").
      if (opts.baseTree !== undefined) text += `M 040000 ${opts.baseTree} ""\n`;
      for (const t of opts.trees ?? []) text += `M 040000 ${t.tree} ${quotePath(t.path)}\n`;
      for (const c of changes) {
        if (c.kind === 'delete') text += `D ${quotePath(c.path)}\n`;
        else {
          const mark = this.marks.get(c.data);
          // An offered blob is named by its mark; any other payload is taken verbatim (exact byte count).
          if (mark !== undefined) text += `M ${c.mode} :${mark} ${quotePath(c.path)}\n`;
          else {
            text += `M ${c.mode} inline ${quotePath(c.path)}\ndata ${c.data.length}\n`;
            await put(c.data);
            text += '\n';
          }
        }
        if (text.length >= CHUNK_BYTES) await put();
      }
      text += `\nget-mark :1\nls :1 ""\n${root ? 'get-mark :2\n' : ''}reset ${scratch}\n\ndone\n`;
      await put();
      await this.flush();
      proc.stdin.end();
      await proc.exited;
      // The commit's packs join the repository's objects before anything can point at them.
      await this.objects?.adopt();
    } catch (err) {
      proc.stdin.destroy();
      throw await explainFailure(this.repo, proc.pid, err, proc.exited);
    } finally {
      await this.objects?.remove();
    }

    const lines = Buffer.concat(this.out).toString('utf8').split('\n');
    const commit = lines[0] ?? '';
    // ls prints "<mode> SP tree SP <id> TAB <path>" with an empty path for the root.
    const tree = /^040000 tree ([0-9a-f]+)\t/.exec(lines[1] ?? '')?.[1];
    if (!/^[0-9a-f]{40,64}$/.test(commit) || !tree) {
      throw new GitOutputError(`unexpected fast-import output: ${JSON.stringify(lines.slice(0, 3))}`);
    }
    const rootCommit = root ? lines[2] : undefined;
    if (root && !/^[0-9a-f]{40,64}$/.test(rootCommit ?? '')) throw new GitOutputError(`unexpected fast-import output: ${JSON.stringify(lines.slice(0, 3))}`);
    return rootCommit ? { commit, tree, root: rootCommit } : { commit, tree };
  }
}

/** A commit's options, checked and normalised: what is refused is refused before anything is sent. */
interface PreparedCommit {
  opts: WriteCommitOptions;
  changes: NormalizedChange[];
  author: NormalizedIdent;
  committer: NormalizedIdent;
  message: Buffer;
  root: { author: NormalizedIdent; message: Buffer } | null;
}

async function prepareCommit(opts: WriteCommitOptions): Promise<PreparedCommit> {
  const changes = normalizeChanges(await collect(opts.files));
  checkCommitOptions(opts);
  return {
    opts,
    changes,
    author: normalizeIdent(opts.author, 'author'),
    committer: normalizeIdent(opts.committer ?? opts.author, 'committer'),
    message: Buffer.from(normalizeMessage(opts.message), 'utf8'),
    root: opts.onRoot ? { author: normalizeIdent(opts.onRoot.author, 'author'), message: Buffer.from(normalizeMessage(opts.onRoot.message), 'utf8') } : null,
  };
}

/** The options a commit is refused for before anything of it is sent. */
function checkCommitOptions(opts: WriteCommitOptions): void {
  const parents = [opts.parent, ...(opts.mergeParents ?? [])].filter((p): p is string => p !== null);
  for (const p of parents) if (!REV.test(p)) throw new GitArgumentError(`invalid parent ${JSON.stringify(p)}`);
  if (opts.parent === null && parents.length > 0) throw new GitArgumentError('mergeParents need a first parent');
  if (opts.baseTree !== undefined && !/^[0-9a-f]{40,64}$/.test(opts.baseTree)) throw new GitArgumentError(`invalid base tree ${JSON.stringify(opts.baseTree)}`);
  if (opts.baseTree !== undefined && opts.deleteAll) throw new GitArgumentError('baseTree and deleteAll exclude each other');
  if (opts.onRoot && opts.parent !== null) throw new GitArgumentError('onRoot replaces the parent: give parent null');
  for (const t of opts.trees ?? []) {
    if (!/^[0-9a-f]{40,64}$/.test(t.tree)) throw new GitArgumentError(`invalid tree ${JSON.stringify(t.tree)}`);
    assertValidPath(t.path);
  }
}

/**
 * Writes a commit whose tree is `parent`'s tree plus `files`, without moving any ref and without
 * touching any worktree or index. All paths are validated (InvalidPathError) before git starts, so a
 * bad path writes nothing at all. Deterministic: same inputs, same commit id.
 */
export async function writeCommit(repo: Repo, opts: WriteCommitOptions, choice: FastImportChoice = {}): Promise<WrittenCommit> {
  // Checked before git starts: a refused commit spawns nothing.
  const prepared = await prepareCommit(opts);
  return FastImportSession.start(repo, choice).commitPrepared(prepared);
}

/**
 * On a fatal error fast-import dumps a crash report into the git directory. It belongs to us, not to
 * the user's repository: lift its "fatal:" line into the error and delete the file.
 */
async function explainFailure(repo: Repo, pid: number | undefined, err: unknown, exited: Promise<unknown>): Promise<unknown> {
  let exitErr: unknown = err;
  try {
    await exited;
  } catch (e) {
    exitErr = e;
  }
  if (pid === undefined) return exitErr;
  for (const dir of new Set([repo.gitDir, repo.commonDir])) {
    const file = join(dir, `fast_import_crash_${pid}`);
    // absent: no crash report written; anything else propagates
    const report = await readFile(file, 'utf8').catch(absentAs(null));
    if (report === null) continue;
    // best effort: the report was read; a leftover file is harmless
    await unlink(file).catch(() => undefined);
    const fatal = /^fatal: .*$/m.exec(report)?.[0];
    if (exitErr instanceof GitError && fatal) {
      return new GitError(exitErr.argv, exitErr.exitCode, exitErr.stderr, `git fast-import failed: ${fatal}`);
    }
  }
  return exitErr;
}
