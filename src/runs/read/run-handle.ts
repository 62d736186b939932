/**
 * A run opened once for one command: where it is, which layout it is in, its folder walked once
 * (runs/read/run-tree.ts), its rows read (and, for another layout, derived) at most once, and the scratch
 * copy that derivation wrote removed when the command is done with it.
 *
 *   publish:  openRun -> validate (the gate) -> prepare -> split -> commit -> dispose
 *   validate: openRun -> validateOpenedRun -> dispose
 *
 * The verb opens the handle at its boundary and passes it down; nothing below it looks for the
 * run's directory, manifest or layout again.
 */
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { runManifestOf, type RunDirLayout } from '../export/source.js';
import { RunTree } from './run-tree.js';
import { runShown } from '../../util/run-shown.js';
import { bundleOf, foreignIndexText, loadDerived, loadRun, readBundle, workspaceDirOf, type LoadedRun } from './run-reader.js';

export interface OpenRunOptions {
  cwd?: string;
  /** The name the run is known by, when it is read from a copy (a published run's id): its errors and report name it so (util/run-shown.ts). */
  shownAs?: string;
  /** Keep each file's bytes once read (publish: its split takes what validation read). */
  keepContents?: boolean;
  /** How a run of another layout is derived (publish carries the runner's files and may rename the experiment), by its layout. */
  derive?: (layout: RunDirLayout) => DeriveChoice;
}

export interface DeriveChoice {
  experiment?: string;
  carryRunnerFiles?: boolean;
}

export class RunHandle {
  /** Each reading of the run, by how it was derived (one, unless a caller needs another experiment name). */
  private loaded = new Map<string, Promise<LoadedRun>>();
  private scratch: string[] = [];
  private disposed = false;

  constructor(
    /** The path as the user named it. */
    readonly named: string,
    readonly cwd: string,
    /** The run's workspace directory; null when `named` is a results file. */
    readonly dir: string | null,
    /** The manifest found in it (our index.jsonl, AgentV 5's .internal/index.jsonl, AgentV 4.42's index). */
    readonly manifest: { file: string; layout: RunDirLayout } | null,
    /** The folder walked once; null for a results file. */
    public tree: RunTree | null,
    private readonly opts: OpenRunOptions,
  ) {}

  /** The run as messages name it: the name it is known by when read from a copy (`shownAs`), else the path as given. */
  get shown(): string {
    return runShown(this.named, this.opts.shownAs);
  }

  /** The name the run is known by when it is read from a copy; undefined when it is read where its user put it. */
  get shownAs(): string | undefined {
    return this.opts.shownAs;
  }

  /** The layout of the workspace: null for a results file (or a folder with no manifest). */
  get layout(): RunDirLayout | null {
    return this.manifest?.layout ?? null;
  }

  /**
   * The run's rows and summary, read once; another layout is derived once into a scratch copy this
   * handle owns. `derive` other than the handle's own derives another copy (a rename of the experiment).
   */
  load(derive?: DeriveChoice): Promise<LoadedRun> {
    const choice = derive ?? (this.manifest ? this.opts.derive?.(this.manifest.layout) : undefined) ?? {};
    const key = JSON.stringify([choice.experiment ?? null, choice.carryRunnerFiles ?? false]);
    let loaded = this.loaded.get(key);
    if (!loaded) {
      loaded = this.read(choice);
      this.loaded.set(key, loaded);
    }
    return loaded;
  }

  private async read(choice: DeriveChoice): Promise<LoadedRun> {
    // plain Error on purpose: a use after dispose is a bug of the caller, not a user-facing failure
    if (this.disposed) throw new Error(`run handle of ${this.named} used after dispose`);
    // A results file or a folder with no manifest: loadRun's own answer (and refusal).
    if (this.dir === null || this.tree === null || this.manifest === null) return loadRun(this.named, { cwd: this.cwd, shownAs: this.opts.shownAs });
    if (this.manifest.layout === 'bundle') {
      const tree = this.tree;
      const index = tree.read('index.jsonl');
      if (index.kind !== 'ok' || !foreignIndexText(index.data.toString('utf8'))) {
        return index.kind === 'ok'
          ? bundleOf(this.dir, this.manifest.file, index.data.toString('utf8'), (rel) => tree.read(rel))
          : readBundle(this.dir, this.shown, (rel) => tree.read(rel));
      }
    }
    const derived = await loadDerived(this.dir, this.cwd, { ...choice, manifest: this.manifest, shownAs: this.opts.shownAs });
    if (derived.dir !== null) this.scratch.push(dirname(derived.dir));
    return derived;
  }

  /** The workspace was rewritten in place (an un-derived bundle of ours): walk it and read it again. */
  reopen(): void {
    if (this.dir === null) return;
    this.tree = RunTree.walk(this.dir, { keep: this.opts.keepContents });
    this.loaded.clear();
  }

  /** Remove the scratch copy a derivation wrote and forget kept contents. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.tree?.release();
    const scratch = this.scratch;
    this.scratch = [];
    await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** Open `path` (a run directory, its index.jsonl, AgentV's .internal/index.jsonl, or a results file). */
export async function openRun(path: string, opts: OpenRunOptions = {}): Promise<RunHandle> {
  const cwd = opts.cwd ?? process.cwd();
  const dir = await workspaceDirOf(path, cwd);
  // A results file has no folder; a folder with no manifest is not walked: loadRun refuses it (it may be a whole project).
  const manifest = dir === null ? null : await runManifestOf(dir);
  const tree = dir !== null && manifest ? RunTree.walk(dir, { keep: opts.keepContents }) : null;
  return new RunHandle(path, cwd, dir, manifest, tree, opts);
}

/** Run `fn` with the run opened, and dispose of it whatever happens. */
export async function withRun<T>(path: string, opts: OpenRunOptions, fn: (run: RunHandle) => Promise<T>): Promise<T> {
  const run = await openRun(path, opts);
  try {
    return await fn(run);
  } finally {
    await run.dispose();
  }
}
