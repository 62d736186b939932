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
 */
import { createHash } from 'node:crypto';
import { lstat, open, readFile, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { safeRelativePath } from '../model/path-segments.js';
import { writeOutputFile } from '../util/output-target.js';
import { absentAs } from '../util/errors.js';
import { mapLimit } from '../util/map-limit.js';

export const MANIFEST = '.agentv-site.json';
const FORMAT = 1;

interface Unit {
  key: string;
  files: string[];
}

interface Manifest {
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

  constructor(
    private readonly out: string,
    previous: Manifest | null,
    private readonly page: string,
  ) {
    this.prior = previous;
    this.old = previous && previous.page === page ? previous : null;
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
    if (this.prior?.files[rel]?.[0] === hash && there?.isFile()) {
      this.counts.unchanged++;
      return;
    }
    await writeOutputFile(join(this.out, rel), [text], { named: false, label: rel, sync: false });
    this.unsynced.push(rel);
    this.counts.written++;
  }

  /** Remove what the last build wrote and this one did not, then write the manifest. */
  async finish(): Promise<void> {
    for (const rel of Object.keys(this.prior?.files ?? {})) {
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
  }
}
