// The soak's running state: the model it builds up, what ran, what went wrong, and the plumbing
// every operation shares (running the CLI as a clone, minting run ids, writing run workspaces).
// The operations themselves are in operations.ts and round.ts; they act on a Soak.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportRun } from '../../../src/runs/export/export.js';
import { openRepo, readBlobs } from '../../../src/git/index.js';
import { cli, cliProcess } from '../../publish-helpers.js';
import type { CliResult } from '../cli.js';
import { makeTempDir } from '../git-fixtures.js';
import { type CheckReport, checkRemote, newCheckState } from './check.js';
import { type Clone, type Model, rowOf, rowsOfIndex, type SoakRun } from './model.js';
import { RESULTS_REF, refsUnder } from './remote.js';

export type OpKind =
  | 'publish-new'
  | 'grow'
  | 'grow-other-clone'
  | 'tag'
  | 'feedback'
  | 'wip-checkpoint'
  | 'wip-publish'
  | 'sync'
  | 'kill-9'
  | 'sync-all'
  | 'conflict-injected'
  | 'resolve';

export class Soak {
  readonly model: Model = { runs: new Map(), tags: new Map(), feedback: new Map() };
  readonly ops = new Map<OpKind, number>();
  readonly violations: string[] = [];
  readonly kills = { landedLocally: 0, notLanded: 0, finishedFirst: 0 };
  readonly publishMs: number[] = [];
  readonly state = newCheckState();
  /** Runs on the remote (and their rows) as of the last point every clone had synced. */
  settled: { run: SoakRun; rows: number[] }[] = [];
  round = 0;
  private runCount = 0;
  private noteCount = 0;

  constructor(
    readonly clones: Clone[],
    readonly remote: string,
    readonly reader: string,
    /** Only for one clone working alone (the checker's own test): commands in the test process. */
    private readonly sequential = false,
  ) {}

  violate(msg: string): void {
    this.violations.push(`round ${this.round}: ${msg}`);
  }

  count(kind: OpKind): void {
    this.ops.set(kind, (this.ops.get(kind) ?? 0) + 1);
  }

  env(c: Clone): Record<string, string> {
    return { AGENTV_RESULTS_HOST: c.host };
  }

  /** Clones work at the same time, each command a process of its own, as on separate machines. */
  async cli(c: Clone, args: string[]): Promise<CliResult> {
    return (this.sequential ? cli : cliProcess)(args, c.dir, { env: this.env(c), timeoutMs: 180_000 });
  }

  async feedback(c: Clone, run: SoakRun, test: string, reviewer: string, text: string, push: boolean): Promise<CliResult> {
    return this.cli(c, ['feedback', run.id, test, text, '--reviewer', reviewer, ...(push ? [] : ['--no-push']), '--json']);
  }

  /** A number no other note of this soak has, so every note text differs from every earlier one. */
  nextNoteNumber(): number {
    return ++this.noteCount;
  }

  newRun(creator: number, opts: { wip?: boolean } = {}): SoakRun {
    const n = this.runCount++;
    // Distinct minutes, one run id each; WIP runs are named after their directory (AgentV's ids too).
    const at = new Date(Date.UTC(2026, 5, 1, 0, 0) + n * 60_000);
    const id = at.toISOString().replace(/[:.]/g, '-');
    const run: SoakRun = {
      id,
      experiment: opts.wip ? 'soak-wip' : `soak-e${n % 3}`,
      timestamp: at.toISOString(),
      seed: n,
      allocated: 0,
      expected: new Set(),
      creator,
      publishers: new Set(),
    };
    this.model.runs.set(id, run);
    return run;
  }

  /** A run workspace with these rows, exported outside every repository. */
  async workspace(run: SoakRun, rows: number[]): Promise<string> {
    const dir = await makeTempDir('soak-ws');
    const src = join(dir, 'results.jsonl');
    await writeFile(src, rows.map((k) => JSON.stringify(rowOf(run, k))).join('\n') + '\n');
    const res = await exportRun({ source: src, out: join(dir, 'run'), cwd: dir, experiment: run.experiment });
    if (res.runId !== run.id) this.violate(`export of run ${run.id} named it ${res.runId}`);
    return res.outDir ?? join(dir, 'run');
  }

  /** Rows of a run that reached the clone's own branches (the results branch, or a sync branch it set aside). */
  async rowsOnClone(c: Clone, run: SoakRun): Promise<Set<number>> {
    const refs = [RESULTS_REF, ...(await refsUnder(c.dir, ['refs/heads/agentv/results-sync/'])).keys()];
    const found = new Set<number>();
    const repo = await openRepo(c.dir);
    const specs = refs.map((r) => `${r}:${run.id}/index.jsonl`);
    const blobs = await readBlobs(repo, specs);
    for (const s of specs) for (const k of rowsOfIndex(blobs.get(s)?.toString('utf8') ?? '').counts.keys()) found.add(k);
    return found;
  }

  /** The median publish so far: kill -9 delays are drawn across it, so kills land anywhere in a publish. */
  typicalPublishMs(): number {
    if (this.publishMs.length === 0) return 1_500;
    const s = [...this.publishMs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)]!;
  }

  /** Tags and feedback only go to runs every clone has seen: those on the remote after the last full sync. */
  settle(): void {
    this.settled = [...this.model.runs.values()].filter((run) => run.expected.size > 0).map((run) => ({ run, rows: [...run.expected].sort((a, b) => a - b) }));
  }

  async check(syncBranchesAllowed: boolean): Promise<CheckReport> {
    const report = await checkRemote({ remote: this.remote, reader: this.reader, model: this.model, state: this.state, syncBranchesAllowed });
    for (const msg of report.violations) this.violate(msg);
    return report;
  }
}
