/**
 * The git merge-driver entry. Installed as, for example,
 *   [merge "agentv-jsonl"] driver = agentv-results merge-driver jsonl %O %A %B %P
 *   [merge "agentv-json"]  driver = agentv-results merge-driver json  %O %A %B %P
 * git hands over three temporary files (%O base, %A ours, %B theirs) and the real path (%P). The
 * driver must leave its result in %A and exit 0 when clean, non-zero when conflicted; on conflict
 * %A gets a readable file with every version between `<<<<<<< ours` / `>>>>>>> theirs` markers.
 * Only the three files git names are touched; no git process is spawned.
 *
 * Its inputs are untrusted (the library's callers can pass any path): a symbolic link at %O, %A or
 * %B is refused, never followed (it could name a file outside the merge), and the result replaces
 * %A by a rename of a fresh file written beside it, so a link put there meanwhile is replaced,
 * never written through.
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { decodeUtf8 } from '../util/canonical-json.js';
import { readRegularFile } from '../util/safe-open.js';
import { mergeOwnedText } from './owned-text.js';
import { driverKindForPath, type MergeKind } from './owned-paths.js';

export const DRIVER_CLEAN = 0;
export const DRIVER_CONFLICT = 1;

/** What git hands over: regular files only (a pipe or device named here would block or never end). */
function readInput(path: string): Promise<Buffer> {
  return readRegularFile(path, { kind: 'merge-input', noFollow: true });
}

/** Replace `path` with `text`: a new file beside it (exclusive create), renamed over it. */
async function replaceFile(path: string, text: string): Promise<void> {
  const temp = `${path}.agentv-merge-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(temp, text, { encoding: 'utf8', flag: 'wx', mode: 0o644 });
    await rename(temp, path);
  } catch (err) {
    // best effort: the temporary file may not exist; the original failure is what matters
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

async function readOrEmpty(path: string): Promise<Uint8Array> {
  try {
    return await readInput(path);
  } catch (error) {
    // git always provides %O, as an empty file when there is no common ancestor; be equally
    // forgiving when it is missing altogether.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Uint8Array();
    throw error;
  }
}

/**
 * Merge the files git passes and write the result into `oursPath`. `kind` is what the driver was
 * installed as; a path we recognize (driverKindForPath) overrides it, so a driver attached to the
 * wrong pattern still runs the right merge. Resolves to 0 (clean) or 1 (conflicted).
 */
export async function runMergeDriver(kind: MergeKind, basePath: string, oursPath: string, theirsPath: string, pathname: string): Promise<number> {
  const effective = driverKindForPath(pathname) ?? kind;
  const [baseBytes, oursBytes, theirsBytes] = await Promise.all([readOrEmpty(basePath), readInput(oursPath), readInput(theirsPath)]);
  const base = decodeUtf8(baseBytes);
  const ours = decodeUtf8(oursBytes);
  const theirs = decodeUtf8(theirsBytes);
  // Not text: leave %A (ours) as it is and report a conflict; git keeps all three stages in the index.
  if (base === null || ours === null || theirs === null) return DRIVER_CONFLICT;

  const result = mergeOwnedText(effective, pathname, base, ours, theirs);
  await replaceFile(oursPath, result.text);
  return result.ok ? DRIVER_CLEAN : DRIVER_CONFLICT;
}
