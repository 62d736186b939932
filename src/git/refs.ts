// Compare-and-swap ref updates (ARCHITECTURE.md rule 4). Every update states the value it expects;
// several refs move in one `update-ref --stdin` transaction, so either all move or none does.
import { GitArgumentError, GitError, RefConflictError } from '../errors/git-errors.js';
import { gitIn, resolveRef, zeroId, type Repo } from './repo.js';
import { gitCause } from '../errors/redact.js';
import { clearJournal, inspectInterrupted, lockAdvice, repairInterrupted, writeJournal } from './ref-recovery.js';

export interface RefUpdate {
  /** Full ref name, under refs/ (HEAD and other pseudo-refs are never ours to move). */
  ref: string;
  /** New value; null deletes the ref. */
  new: string | null;
  /** Value the ref must hold now; null means it must not exist. */
  old: string | null;
}

export interface UpdateRefsOptions {
  /** Reflog message. */
  message?: string;
}

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

function validate(updates: readonly RefUpdate[]): void {
  const seen = new Set<string>();
  for (const u of updates) {
    if (!u.ref.startsWith('refs/') || /[\0\n\s]/.test(u.ref))
      throw new GitArgumentError(`refusing to update ${JSON.stringify(u.ref)}: not a full ref name under refs/`);
    if (seen.has(u.ref)) throw new GitArgumentError(`ref ${u.ref} appears twice in one transaction`);
    seen.add(u.ref);
    for (const v of [u.new, u.old]) {
      if (v !== null && !OID.test(v)) throw new GitArgumentError(`ref ${u.ref}: ${JSON.stringify(v)} is not a full object id`);
    }
  }
}

/**
 * Applies all updates atomically, each checked against its `old` value. Throws RefConflictError for
 * the first ref whose current value differs from what was expected (nothing is changed then).
 */
export async function updateRefs(repo: Repo, updates: RefUpdate[], opts: UpdateRefsOptions = {}): Promise<void> {
  validate(updates);
  if (updates.length === 0) return;
  const zero = zeroId(repo);
  // -z: fields are NUL-terminated, and in this format an empty old value would mean "do not check",
  // so absence is always spelled with create/verify or the all-zero id.
  let input = 'start\0';
  for (const u of updates) {
    if (u.new !== null && u.old !== null) input += `update ${u.ref}\0${u.new}\0${u.old}\0`;
    else if (u.new !== null) input += `create ${u.ref}\0${u.new}\0`;
    else if (u.old !== null) input += `delete ${u.ref}\0${u.old}\0`;
    else input += `verify ${u.ref}\0${zero}\0`;
  }
  input += 'prepare\0commit\0';
  const args = ['update-ref', '--no-deref', '-z', '--stdin'];
  if (opts.message !== undefined) args.splice(1, 0, '-m', opts.message);
  // A git killed mid-transaction may have left a lock or a half-moved pair: repair that first.
  const refs = updates.map((u) => u.ref);
  await repairInterrupted(repo, refs);
  if (updates.length > 1) await writeJournal(repo, updates);
  const r = await gitIn(repo, args, { input, okCodes: [0, 128] });
  if (updates.length > 1) await clearJournal(repo);
  if (r.code === 0) return;
  if (/\.lock'?: File exists/.test(r.stderr)) {
    const found = await inspectInterrupted(repo, refs);
    const advice = found?.locks.map(lockAdvice).join('; ');
    if (advice) throw new GitError(['git', ...args], r.code, r.stderr, `cannot update ${refs.join(' and ')} (${gitCause(r.stderr)}): ${advice}`);
  }
  throw await conflictOrError(repo, updates, r.stderr, ['git', ...args]);
}

/** One compare-and-swap: set `ref` to `newSha` only if it currently is `oldSha` (null = absent). */
export async function updateRef(repo: Repo, ref: string, newSha: string, oldSha: string | null, opts: UpdateRefsOptions = {}): Promise<void> {
  await updateRefs(repo, [{ ref, new: newSha, old: oldSha }], opts);
}

/** Deletes `ref` only if it currently is `oldSha`. */
export async function deleteRef(repo: Repo, ref: string, oldSha: string, opts: UpdateRefsOptions = {}): Promise<void> {
  await updateRefs(repo, [{ ref, new: null, old: oldSha }], opts);
}

// "fatal: prepare: cannot lock ref 'refs/heads/x': <reason>" (LC_ALL=C is set by the runner).
const LOCK_FAILURE = /cannot lock ref '([^']+)': (.*)/;

/**
 * Turns a failed transaction into RefConflictError when git reports that a ref's value is not the
 * expected one. Other failures (a stale .lock file, a directory/file name clash) stay GitError:
 * retrying the compare-and-swap would not help with those.
 */
async function conflictOrError(repo: Repo, updates: readonly RefUpdate[], stderr: string, argv: string[]): Promise<Error> {
  const m = LOCK_FAILURE.exec(stderr);
  const u = m ? updates.find((x) => x.ref === m[1]) : undefined;
  const reason = m?.[2] ?? '';
  if (u) {
    const isAt = /is at ([0-9a-f]+) but expected/.exec(reason);
    if (isAt) return new RefConflictError(u.ref, u.old, isAt[1] as string);
    if (/unable to resolve reference/.test(reason)) return new RefConflictError(u.ref, u.old, null);
    if (/reference already exists/.test(reason)) return new RefConflictError(u.ref, u.old, await resolveRef(repo, u.ref));
  }
  return new GitError(argv, 128, stderr);
}

/**
 * For `.catch` on a remote-tracking ref update: a lost compare-and-swap means a concurrent fetch
 * moved the ref to what the remote holds now, as current as ours, so it stands; any other failure
 * is rethrown. Only for tracking refs (a cache of the remote), never for our own branches.
 */
export function tolerateLostRace(err: unknown): void {
  if (!(err instanceof RefConflictError)) throw err;
}
