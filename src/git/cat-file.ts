// Reading objects in bulk: one `git cat-file --batch` process for any number of objects (listing
// runs reads a few catalog blobs per day; one process each would dominate the cost).
import type { Repo } from './repo.js';
import { spawnGit } from './runner.js';
import { GitArgumentError, GitOutputError } from '../errors/git-errors.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  sha: string;
  type: ObjectType;
  data: Buffer;
}

function checkSpecs(specs: readonly string[]): void {
  for (const s of specs) {
    if (s.length === 0 || /[\n\0]/.test(s)) throw new GitArgumentError(`invalid object spec ${JSON.stringify(s)}`);
  }
}

const HEADER = /^([0-9a-f]+) (blob|tree|commit|tag) (\d+)$/;

/**
 * The one reader of `git cat-file --batch` output. Output is, per input line and in order, either
 * "<id> <type> <size>\n<content>\n" or "<spec> missing\n" / "<spec> ambiguous\n". It is parsed as
 * it streams in, so git inflates the next objects while we read the last ones, and nothing holds
 * the whole output: `each` gets a view of each object's bytes that is valid only during the call
 * (copy what you keep). Sizes are exact, so content is sliced, never scanned; an object larger
 * than a pipe chunk is joined once, when all of it has arrived.
 */
async function streamBatch(repo: Repo, specs: readonly string[], each: (index: number, object: GitObject | null) => void): Promise<void> {
  if (specs.length === 0) return;
  checkSpecs(specs);
  // --buffer: we close stdin right away, so there is no need to flush after every object.
  const proc = spawnGit(['cat-file', '--batch', '--buffer'], { gitDir: repo.gitDir });
  let next = 0; // index of the spec whose object comes next
  let parked: Buffer[] = []; // bytes received and not yet consumed
  let parkedBytes = 0;
  let wanted = 1; // bytes needed before parsing can move on
  let failure: unknown = null;
  const feed = (chunk: Buffer): void => {
    parked.push(chunk);
    parkedBytes += chunk.length;
    if (parkedBytes < wanted || next >= specs.length) return;
    const buf = parked.length === 1 ? (parked[0] as Buffer) : Buffer.concat(parked, parkedBytes);
    let pos = 0;
    wanted = 1;
    while (next < specs.length) {
      const spec = specs[next] as string;
      const nl = buf.indexOf(0x0a, pos);
      if (nl < 0) {
        wanted = buf.length - pos + 1;
        break;
      }
      const header = buf.toString('utf8', pos, nl);
      if (header.endsWith(' missing')) {
        each(next++, null);
        pos = nl + 1;
        continue;
      }
      if (header.endsWith(' ambiguous')) throw new GitArgumentError(`object spec ${JSON.stringify(spec)} is ambiguous`);
      const m = HEADER.exec(header);
      if (!m) throw new GitOutputError(`unexpected cat-file header ${JSON.stringify(header)} for ${JSON.stringify(spec)}`);
      const end = nl + 1 + Number(m[3]);
      if (end + 1 > buf.length) {
        wanted = end + 1 - pos;
        break;
      }
      each(next++, { sha: m[1] as string, type: m[2] as ObjectType, data: buf.subarray(nl + 1, end) });
      pos = end + 1;
    }
    const rest = buf.subarray(pos);
    parked = rest.length > 0 ? [rest] : [];
    parkedBytes = rest.length;
  };
  proc.stdout.on('data', (chunk: Buffer) => {
    if (failure !== null) return;
    try {
      feed(chunk);
    } catch (err) {
      failure = err;
      proc.kill();
    }
  });
  proc.stdin.end(Buffer.from(`${specs.join('\n')}\n`, 'utf8'));
  try {
    await proc.exited;
  } catch (err) {
    throw failure ?? err;
  }
  if (failure !== null) throw failure;
  if (next < specs.length) throw new GitOutputError(`truncated cat-file output while reading ${JSON.stringify(specs[next])}`);
}

/** Reads each spec ("<rev>:<path>", an object id, a ref...) in order; null for a missing object. */
async function batch(repo: Repo, specs: readonly string[]): Promise<(GitObject | null)[]> {
  const results: (GitObject | null)[] = new Array(specs.length).fill(null);
  await streamBatch(repo, specs, (i, o) => {
    results[i] = o && { ...o, data: Buffer.from(o.data) };
  });
  return results;
}

function blobOnly(spec: string, o: GitObject | null): Buffer | null {
  if (o && o.type !== 'blob') throw new GitArgumentError(`${spec} is a ${o.type}, not a file`);
  return o ? o.data : null;
}

/**
 * Many blobs without keeping them: `each(spec, bytes)` as each arrives (null when missing), the
 * bytes a view valid only during the call. For reads that keep a little of many blobs (the
 * summaries of 20,000 runs), where holding and copying all of them would cost more than reading.
 * With `processes` > 1 the specs are split across that many `cat-file` processes run side by side
 * (git inflates on as many cores); `each` is then called in no particular order. A spec naming a
 * tree, commit or tag rejects, as `readBlobs` does.
 */
export async function forEachBlob(
  repo: Repo,
  specs: readonly string[],
  each: (spec: string, data: Buffer | null) => void,
  opts: { processes?: number } = {},
): Promise<void> {
  const n = Math.max(1, Math.min(opts.processes ?? 1, Math.ceil(specs.length / 1000)));
  const per = Math.ceil(specs.length / n);
  const slices = Array.from({ length: n }, (_, k) => specs.slice(k * per, (k + 1) * per));
  await Promise.all(slices.map((slice) => streamBatch(repo, slice, (i, o) => each(slice[i] as string, blobOnly(slice[i] as string, o)))));
}

/**
 * Contents of many blobs with one process. Keys are the specs as given; the value is null when the
 * object does not exist (e.g. a path absent from that commit). A spec naming a tree, commit or tag
 * throws: silently returning tree bytes as file content would be a worse failure.
 */
export async function readBlobs(repo: Repo, specs: string[]): Promise<Map<string, Buffer | null>> {
  const objects = await batch(repo, specs);
  return new Map(specs.map((spec, i) => [spec, blobOnly(spec, objects[i] ?? null)]));
}

/** One object of any type, raw (a tree comes back in git's binary tree format); null when missing. */
export async function catFile(repo: Repo, spec: string): Promise<GitObject | null> {
  const [o] = await batch(repo, [spec]);
  return o ?? null;
}

/** Many objects of any type with one process, keyed by spec; null for a missing one. */
export async function readObjects(repo: Repo, specs: string[]): Promise<Map<string, GitObject | null>> {
  const objects = await batch(repo, specs);
  return new Map(specs.map((spec, i) => [spec, objects[i] ?? null]));
}
