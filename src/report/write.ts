/**
 * Write a file atomically from a stream of string chunks: a hidden temporary sibling (same
 * directory, so the same filesystem) is written, flushed to disk, then renamed over the target.
 * A reader — or a GitHub Pages build — never sees a half-written report, and an interrupted run
 * leaves the previous report in place. The temporary name follows the `.name.tmp-<pid>-<hex>`
 * convention of derive/atomic-dir.ts, whose stale-staging cleanup recognises it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Chunks are batched into writes of about this many UTF-16 units. */
const BATCH = 1 << 20;

export async function writeFileAtomic(path: string, chunks: Iterable<string>): Promise<number> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o644);
  let bytes = 0;
  try {
    const writeAll = async (text: string) => {
      const buf = Buffer.from(text, 'utf8');
      let offset = 0;
      while (offset < buf.length) offset += (await fh.write(buf, offset, buf.length - offset)).bytesWritten;
      bytes += buf.length;
    };
    let pending: string[] = [];
    let size = 0;
    for (const chunk of chunks) {
      pending.push(chunk);
      size += chunk.length;
      if (size >= BATCH) {
        await writeAll(pending.join(''));
        pending = [];
        size = 0;
      }
    }
    if (pending.length > 0) await writeAll(pending.join(''));
    await fh.sync();
    await fh.close();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return bytes;
}
