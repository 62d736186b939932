/**
 * The site's files on disk and its manifest (`.agentv-site.json`): each file the last build wrote
 * with the sha256 of its bytes, and each run's (and compared pair's) change key with the files it
 * produced. A rebuild writes a file only when its bytes differ from the manifest's (or it is not
 * there), keeps a unit whose key is unchanged without producing it again, and removes the files
 * no unit produces any more. Every file is written atomically (util/output-target.ts: a temporary
 * file renamed over it), the manifest last, so an interrupted build leaves a site the next build
 * repairs. Files are flushed to disk together before the manifest is written, not one by one (an
 * fsync per file was most of a first build's cost a run): the manifest never names bytes a power
 * loss could still take.
 *
 * An in-progress stamp (`.agentv-results-site`) is written first, before any content, and removed
 * after the manifest: a directory holding it is one a `site` of ours was writing when it was
 * stopped (kill -9, a full disk). The next build resumes it (`resume`): it trusts no file the old
 * manifest names without reading it (a file whose bytes already match is kept), and removes what
 * the interrupted build left that this one does not produce — our temporary files, and files
 * written after the stamp — so the result equals a clean build's. A file older than the stamp
 * that no manifest names (a CNAME the user added) is left alone.
 */
import { createHash } from 'node:crypto';
import { lstat, open, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { safeRelativePath } from '../runs/read/run-files.js';
import { writeOutputFile } from '../util/output-target.js';
import { absentAs } from '../errors/errors.js';
import { mapLimit } from '../util/map-limit.js';

export const MANIFEST = '.agentv-site.json';
/** The in-progress stamp: written before any content, removed after the manifest. */
export const STAMP = '.agentv-results-site';
const FORMAT = 1;
const STAMP_TOOL = 'agentv-results site';
/** writeOutputFile's temporary name (`.name.tmp-<pid>-<hex>`). */
const TEMP = /^\..+\.tmp-\d+-[0-9a-f]+$/;

export interface Stamp {
  pid: number;
  /** When the interrupted build began (the stamp's mtime): files written since are its own. */
  since: number;
}

/** The in-progress stamp a build of ours left in `out`, or null (none, or not ours). */
export async function readStamp(out: string): Promise<Stamp | null> {
  const file = join(out, STAMP);
  const st = await lstat(file).catch(absentAs(null));
  if (!st?.isFile() || st.size > 4096) return null;
  // absent: removed since the lstat (the build ended); anything else (unreadable) propagates
  const text = await readFile(file, 'utf8').catch(absentAs(null));
  if (text === null) return null;
  try {
    const doc = JSON.parse(text) as { tool?: unknown; pid?: unknown };
    if (doc.tool !== STAMP_TOOL) return null;
    return { pid: typeof doc.pid === 'number' ? doc.pid : 0, since: st.mtimeMs };
  } catch {
    // unparsable: not a stamp of ours
    return null;
  }
}

/**
 * True when `out` holds only temporary files of a stamp being written (a build stopped before its
 * stamp was in place, so before any content): they are removed and the directory is a fresh one.
 */
export async function clearStampLeftovers(out: string): Promise<boolean> {
  const names = await readdir(out);
  const ours = new RegExp(`^\\.\\${STAMP}\\.tmp-\\d+-[0-9a-f]+$`); // writeOutputFile's `.<name>.tmp-<pid>-<hex>`
  if (names.length === 0 || !names.every((n) => ours.test(n))) return false;
  for (const n of names) await rm(join(out, n), { force: true });
  return true;
}

/** Write the in-progress stamp (flushed: it must be on disk before any content is). */
export async function writeStamp(out: string): Promise<void> {
  await writeOutputFile(join(out, STAMP), [`${JSON.stringify({ tool: STAMP_TOOL, pid: process.pid })}\n`], { named: false, label: STAMP });
}

interface Unit {
  key: string;
  files: string[];
}

export interface Manifest {
  format: number;
  /** The page's own hash: when the page (its script) changes, every unit is produced again. */
  page: string;
  /** Each file: the sha256 of its bytes and their count. */
  files: Record<string, [string, number]>;
  units: Record<string, Unit>;
}

export interface WriteCounts {
  written: number;
  unchanged: number;
  removed: number;
  bytes: number;
  /** The largest file of the site, in bytes. */
  largest: number;
}

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The manifest of a previous build in `out`, or null (none, or not ours). */
export async function readManifest(out: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await readFile(join(out, MANIFEST), 'utf8');
  } catch (err) {
    // absent: no previous build; anything else propagates
    return absentAs(null)(err);
  }
  try {
    const m = JSON.parse(text) as Manifest;
    if (m.format !== FORMAT || typeof m.files !== 'object' || typeof m.units !== 'object') return null;
    return m;
  } catch {
    // unparsable: the site is built from scratch
    return null;
  }
}

export class SiteWriter {
  private files: Record<string, [string, number]> = {};
  private units: Record<string, Unit> = {};
  readonly counts: WriteCounts = { written: 0, unchanged: 0, removed: 0, bytes: 0, largest: 0 };
  /** Files written by this build and not yet flushed to disk (finish() flushes them before the manifest). */
  private unsynced: string[] = [];
  /** The last build's manifest (its files), and the same when its units may be kept (same page). */
  private readonly prior: Manifest | null;
  private readonly old: Manifest | null;

  /**
   * `resume`: the stamp of an interrupted build was found. No file is trusted without reading it,
   * no unit is kept, and finish() removes what that build left that this one does not produce.
   */
  constructor(
    private readonly out: string,
    previous: Manifest | null,
    private readonly page: string,
    private readonly resume: Stamp | null = null,
    /** False (`site --full`): no unit is kept, but what the last build wrote and this one does not is still removed. */
    reuseUnits = true,
  ) {
    this.prior = previous;
    this.old = previous && previous.page === page && !resume && reuseUnits ? previous : null;
  }

  /** True when the last build produced unit `name` from the same key (its files are kept as they are). */
  keep(name: string, key: string): boolean {
    const u = this.old?.units[name];
    if (!u || u.key !== key) return false;
    for (const f of u.files) {
      if (this.prior?.files[f] === undefined) return false;
    }
    for (const f of u.files) {
      const h = this.prior!.files[f]!;
      this.files[f] = h;
      this.counts.unchanged++;
      this.counts.bytes += h[1];
      this.counts.largest = Math.max(this.counts.largest, h[1]);
    }
    this.units[name] = u;
    return true;
  }

  /** A unit named `name`: the files put into the list it returns are kept next time while its key is `key`. */
  begin(name: string, key: string): string[] {
    const files: string[] = [];
    this.units[name] = { key, files };
    return files;
  }

  /** Forget a unit that failed half-way (the next build produces it again). */
  drop(name: string): void {
    delete this.units[name];
  }

  /** Write `rel` (a relative path the builder made) unless it already holds these bytes; `into`: the unit it belongs to. */
  async put(rel: string, text: string, into?: string[]): Promise<void> {
    // A plain Error on purpose: every path comes from model/site-paths.ts (a bug, never user input).
    if (safeRelativePath(rel) !== rel) throw new Error(`site: refusing the path ${JSON.stringify(rel)}`);
    const hash = sha(text);
    const size = Buffer.byteLength(text);
    this.files[rel] = [hash, size];
    into?.push(rel);
    this.counts.bytes += size;
    this.counts.largest = Math.max(this.counts.largest, size);
    // absent: a file the manifest names but that is gone is written again; anything else propagates
    const there = await lstat(join(this.out, rel)).catch(absentAs(null));
    if (!this.resume && this.prior?.files[rel]?.[0] === hash && there?.isFile()) {
      this.counts.unchanged++;
      return;
    }
    // Resuming: a file the interrupted build wrote whole is kept (and flushed with the rest).
    if (
      this.resume &&
      there?.isFile() &&
      there.size === size &&
      createHash('sha256')
        .update(await readFile(join(this.out, rel)))
        .digest('hex') === hash
    ) {
      this.unsynced.push(rel);
      this.counts.unchanged++;
      return;
    }
    await writeOutputFile(join(this.out, rel), [text], { named: false, label: rel, sync: false });
    this.unsynced.push(rel);
    this.counts.written++;
  }

  /** Remove what the last build wrote and this one did not, then write the manifest, then remove the stamp. */
  async finish(): Promise<void> {
    const stale = new Set(Object.keys(this.prior?.files ?? {}));
    if (this.resume) for (const rel of await this.leftByInterrupted()) stale.add(rel);
    for (const rel of stale) {
      if (rel in this.files || safeRelativePath(rel) !== rel) continue;
      await rm(join(this.out, rel), { force: true });
      this.counts.removed++;
      // best effort: a directory left empty goes too; one still holding files stays
      for (let d = dirname(rel); d !== '.' && d !== ''; d = dirname(d))
        if (
          !(await rmdir(join(this.out, d)).then(
            () => true,
            () => false,
          ))
        )
          break;
    }
    // Flushed together (the disk batches concurrent flushes), then the manifest that names them.
    await mapLimit(this.unsynced, 32, async (rel) => {
      const fh = await open(join(this.out, rel), 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
    this.unsynced = [];
    const manifest: Manifest = { format: FORMAT, page: this.page, files: this.files, units: this.units };
    await writeOutputFile(join(this.out, MANIFEST), [`${JSON.stringify(manifest)}\n`], { named: false, label: MANIFEST });
    await rm(join(this.out, STAMP), { force: true });
  }

  /**
   * The files an interrupted build left: our temporary files, and regular files written since its
   * stamp. Walked without following links (a link is never ours: the site writes regular files).
   * Bounded by the directory's size: each entry is visited once.
   */
  private async leftByInterrupted(): Promise<string[]> {
    const left: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      for (const e of await readdir(join(this.out, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (!rel && (e.name === MANIFEST || e.name === STAMP)) continue;
        if (e.isDirectory()) await walk(r);
        else if (e.isFile()) {
          if (TEMP.test(e.name)) left.push(r);
          else if ((await lstat(join(this.out, r))).mtimeMs >= this.resume!.since) left.push(r);
        }
      }
    };
    await walk('');
    return left;
  }
}
