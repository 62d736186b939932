// Reading objects in bulk: one `git cat-file --batch` process for any number of objects (listing
// runs reads a few catalog blobs per day; one process each would dominate the cost).
import type { Repo } from './repo.js';
import { runGit } from './runner.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  sha: string;
  type: ObjectType;
  data: Buffer;
}

/** Reads each spec ("<rev>:<path>", an object id, a ref...) in order; null for a missing object. */
async function batch(repo: Repo, specs: readonly string[]): Promise<(GitObject | null)[]> {
  if (specs.length === 0) return [];
  for (const s of specs) {
    if (s.length === 0 || /[\n\0]/.test(s)) throw new Error(`invalid object spec ${JSON.stringify(s)}`);
  }
  const input = Buffer.from(`${specs.join('\n')}\n`, 'utf8');
  // --buffer: we close stdin right away, so there is no need to flush after every object.
  const r = await runGit(['cat-file', '--batch', '--buffer'], { gitDir: repo.gitDir, input });
  return parseBatchOutput(r.stdout, specs);
}

/**
 * Output is, per input line and in order, either "<id> <type> <size>\n<content>\n" or
 * "<spec> missing\n" / "<spec> ambiguous\n". Sizes are exact, so content is sliced, never scanned.
 */
function parseBatchOutput(out: Buffer, specs: readonly string[]): (GitObject | null)[] {
  const results: (GitObject | null)[] = [];
  let pos = 0;
  for (const spec of specs) {
    const nl = out.indexOf(0x0a, pos);
    if (nl < 0) throw new Error(`truncated cat-file output while reading ${JSON.stringify(spec)}`);
    const header = out.subarray(pos, nl).toString('utf8');
    pos = nl + 1;
    if (header.endsWith(' missing')) {
      results.push(null);
      continue;
    }
    if (header.endsWith(' ambiguous')) throw new Error(`object spec ${JSON.stringify(spec)} is ambiguous`);
    const m = /^([0-9a-f]+) (blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!m) throw new Error(`unexpected cat-file header ${JSON.stringify(header)} for ${JSON.stringify(spec)}`);
    const size = Number(m[3]);
    const data = out.subarray(pos, pos + size);
    if (data.length !== size) throw new Error(`truncated object ${JSON.stringify(spec)}`);
    pos += size + 1;
    results.push({ sha: m[1] as string, type: m[2] as ObjectType, data: Buffer.from(data) });
  }
  return results;
}

/**
 * Contents of many blobs with one process. Keys are the specs as given; the value is null when the
 * object does not exist (e.g. a path absent from that commit). A spec naming a tree, commit or tag
 * throws: silently returning tree bytes as file content would be a worse failure.
 */
export async function readBlobs(repo: Repo, specs: string[]): Promise<Map<string, Buffer | null>> {
  const objects = await batch(repo, specs);
  const map = new Map<string, Buffer | null>();
  specs.forEach((spec, i) => {
    const o = objects[i] ?? null;
    if (o && o.type !== 'blob') throw new Error(`${spec} is a ${o.type}, not a file`);
    map.set(spec, o ? o.data : null);
  });
  return map;
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
