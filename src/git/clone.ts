/**
 * Managed clones: when the results repository is given as a URL with no local checkout, we keep
 * a bare, blob-less clone in a cache directory and never touch any checkout of the user's.
 * `--filter=blob:none` keeps it small: blobs are fetched only when a run is read back.
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runGit } from './runner.js';
import { openRepo, type Repo } from './repo.js';
import { classifyRemoteFailure } from './classify.js';
import { GitArgumentError, GitError, RemoteError } from '../errors/git-errors.js';
import { networkSpawn, silenceMessage } from './network.js';
import { absentAs } from '../errors/errors.js';

/** `offline: false` refuses to start an empty clone when the remote cannot be reached now. */
export async function ensureBareClone(url: string, dir: string, opts: { timeoutMs?: number; offline?: boolean } = {}): Promise<Repo> {
  if (url.startsWith('-')) throw new GitArgumentError(`invalid repository URL ${JSON.stringify(url)}`);
  // absent: clone it; anything else (a cache we may not read) propagates
  const exists = await stat(dir).then(() => true, absentAs(false));
  if (exists) return openRepo(dir);
  await mkdir(dirname(dir), { recursive: true });
  // Clone beside the final name and rename: a clone interrupted half-way is never mistaken for a cache.
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const net = await networkSpawn(null, url, opts.timeoutMs || undefined);
  try {
    let r: Awaited<ReturnType<typeof runGit>>;
    try {
      r = await runGit(['clone', '--bare', '--quiet', '--filter=blob:none', '--no-tags', '--', url, tmp], {
        okCodes: [0, 128],
        env: net.env,
        signal: net.signal,
      });
    } catch (err) {
      // The deadline passed: the remote is as good as down (below: an empty clone stays pending).
      if (!(err instanceof GitError) || !net.signal.aborted) throw err;
      r = { code: 128, stdout: Buffer.alloc(0), stderr: `${err.stderr}\n${silenceMessage(net, 'cloning', err.stderr)} (timed out after ${net.deadlineMs} ms)` };
    }
    if (r.code !== 0) {
      const kind = classifyRemoteFailure(r.stderr);
      const silent = silenceMessage(net, 'cloning', r.stderr);
      // Down or refusing us today: start an empty clone with the remote configured, so the run is
      // committed locally and stays pending until a push lands (what the README promises). Any
      // other failure (a wrong URL) is the user's to fix now.
      if (kind === 'other' || opts.offline === false) throw new RemoteError(['git', 'clone', url], r.code, r.stderr, kind, silent ?? undefined);
      await rm(tmp, { recursive: true, force: true });
      await runGit(['init', '--quiet', '--bare', '--', tmp]);
      await runGit(['config', 'remote.origin.url', url], { cwd: tmp });
    }
    await rename(tmp, dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return openRepo(dir);
}
