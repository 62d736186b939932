/**
 * Object ids computed in-process (no git spawned): lets publish tell whether a file on a branch
 * already has exactly our bytes without writing anything.
 */
import { createHash } from 'node:crypto';
import type { Repo } from './repo.js';

export function blobId(repo: Pick<Repo, 'objectFormat'>, data: Buffer): string {
  const hash = createHash(repo.objectFormat === 'sha256' ? 'sha256' : 'sha1');
  hash.update(`blob ${data.length}\0`);
  hash.update(data);
  return hash.digest('hex');
}
