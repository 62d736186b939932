/**
 * The three output layouts. Every layout derives from the same normalized rows and the same
 * aggregates; they differ only in where files go.
 *
 * - bundle: the canonical run workspace (index.jsonl + sidecars per attempt).
 * - companion (the companion-artifacts spec): grading/<test-id>.json, timing.json, benchmark.json side by side.
 * - skill-creator: iteration-1/eval-<n>/<configuration>/run-<k>/ as skill-creator's
 *   aggregate_benchmark.py and eval-viewer read it (integer eval ids and run numbers, outputs/
 *   always present, no timing block in grading.json). eval_metadata.json is written twice: in
 *   eval-<n>/, where aggregate_benchmark.py takes the eval id from, and in eval-<n>/<configuration>/,
 *   because generate_review.py only looks in a run's folder and its parent for the prompt.
 */
import { sanitizeSegment, shortHash } from '../../model/path-segments.js';
import type { BenchmarkSlot } from './aggregate.js';
import type { NormalizedRow } from './normalize.js';
import { gradingDoc } from './grading-docs.js';
import { attemptTimingDoc, deriveRowFiles, json, type DerivedFile, type PendingIndexRow } from './row-files.js';

export type LayoutName = 'bundle' | 'companion' | 'skill-creator';
export const LAYOUTS: LayoutName[] = ['bundle', 'companion', 'skill-creator'];

export interface RowOutput {
  /** Directory (or file) owned by this row; removed before a duplicate is rewritten. */
  owned: string;
  files: DerivedFile[];
  index: PendingIndexRow;
  /** Where the row sits in the skill-creator layout, so benchmark.json numbers it the same way. */
  slot?: BenchmarkSlot;
}

export interface RowContext {
  key: string;
  rawLine: string;
  includeRawContent: boolean;
}

export interface LayoutWriter {
  name: LayoutName;
  row(row: NormalizedRow, ctx: RowContext): RowOutput;
  /** Names of run-level files: where the layout wants summary/benchmark/timing/index. */
  runFiles: { index: string | null; summary: string | null; benchmark: string; timing: string | null };
}

class BundleLayout implements LayoutWriter {
  readonly name = 'bundle' as const;
  readonly runFiles = { index: 'index.jsonl', summary: 'summary.json', benchmark: 'benchmark.json', timing: 'timing.json' };
  row(row: NormalizedRow, ctx: RowContext): RowOutput {
    const out = deriveRowFiles(row, { includeRawContent: ctx.includeRawContent, rawLine: ctx.rawLine });
    return { owned: out.dir, files: out.files, index: out.index };
  }
}

/** Gives each identity a stable, collision-free name in first-seen order. */
class Namer {
  private readonly byKey = new Map<string, string>();
  private readonly taken = new Set<string>();
  name(key: string, candidates: string[]): string {
    const known = this.byKey.get(key);
    if (known) return known;
    let chosen = candidates.find((c) => !this.taken.has(c));
    for (let i = 2; chosen === undefined; i++) {
      const c = `${candidates[candidates.length - 1]}-${i}`;
      if (!this.taken.has(c)) chosen = c;
    }
    this.byKey.set(key, chosen);
    this.taken.add(chosen);
    return chosen;
  }
}

class CompanionLayout implements LayoutWriter {
  readonly name = 'companion' as const;
  readonly runFiles = { index: null, summary: null, benchmark: 'benchmark.json', timing: 'timing.json' };
  private readonly names = new Namer();
  row(row: NormalizedRow, ctx: RowContext): RowOutput {
    const index = deriveRowFiles(row, { includeRawContent: false }).index;
    const id = sanitizeSegment(row.test_id);
    const target = sanitizeSegment(row.target);
    const name = this.names.name(ctx.key, [id, `${id}--${target}`, `${id}--${target}--attempt-${row.attempt}`]);
    const path = `grading/${name}.json`;
    return { owned: path, files: [{ path, data: json({ test_id: row.test_id, target: row.target, ...gradingDoc(row) }) }], index };
  }
}

/**
 * Folder names skill-creator's readers treat specially: generate_review.py never descends into the
 * first four and takes a folder holding `outputs/` for a run; eval_metadata.json is our own file.
 * A target with such a name gets a hash suffix, as unsafe names do.
 */
const RESERVED_CONFIGS = new Set(['skill', 'inputs', 'node_modules', '__pycache__', 'outputs', 'eval_metadata.json']);

export function skillCreatorConfiguration(target: string): string {
  const name = sanitizeSegment(target);
  return RESERVED_CONFIGS.has(name) ? `${name}-${shortHash(target)}` : name;
}

class SkillCreatorLayout implements LayoutWriter {
  readonly name = 'skill-creator' as const;
  readonly runFiles = { index: null, summary: null, benchmark: 'iteration-1/benchmark.json', timing: null };
  private readonly evalIds = new Map<string, number>();
  private readonly runs = new Map<string, number>();
  private readonly runOf = new Map<string, number>();
  private readonly prompts = new Map<number, string>();
  row(row: NormalizedRow, ctx: RowContext): RowOutput {
    const index = deriveRowFiles(row, { includeRawContent: false }).index;
    const evalId = this.evalIds.get(row.test_id) ?? this.evalIds.size + 1;
    this.evalIds.set(row.test_id, evalId);
    const config = skillCreatorConfiguration(row.target);
    let runNumber = this.runOf.get(ctx.key);
    if (runNumber === undefined) {
      const slot = `${evalId}/${config}`;
      runNumber = (this.runs.get(slot) ?? 0) + 1;
      this.runs.set(slot, runNumber);
      this.runOf.set(ctx.key, runNumber);
    }
    const evalDir = `iteration-1/eval-${evalId}`;
    const runDir = `${evalDir}/${config}/run-${runNumber}`;
    const own = row.input_messages.map((m) => m.content).join('\n\n');
    // The eval's prompt is the first one a row of it carries (the eval-level file is rewritten by
    // every row); generate_review.py shows "(No prompt found)" for an empty one, so a row without
    // input (most AgentV result files record none) says so, and which test it is.
    if (own && !this.prompts.has(evalId)) this.prompts.set(evalId, own);
    const prompt = own || this.prompts.get(evalId) || `(no input recorded for ${row.test_id})`;
    const metadata = json({ eval_id: evalId, eval_name: row.test_id, prompt, assertions: row.expectations.map((e) => e.text) });
    const evalMetadata = json({
      eval_id: evalId,
      eval_name: row.test_id,
      prompt: this.prompts.get(evalId) ?? prompt,
      assertions: row.expectations.map((e) => e.text),
    });
    const files: DerivedFile[] = [
      { path: `${runDir}/grading.json`, data: json(gradingDoc(row)) },
      { path: `${runDir}/timing.json`, data: json(attemptTimingDoc(row)) },
      { path: `${runDir}/outputs/answer.md`, data: row.answer ?? '' },
      { path: `${evalDir}/eval_metadata.json`, data: evalMetadata },
      { path: `${evalDir}/${config}/eval_metadata.json`, data: metadata },
    ];
    if (row.file_changes !== null) files.push({ path: `${runDir}/outputs/file_changes.diff`, data: row.file_changes });
    return { owned: runDir, files, index, slot: { evalId, runNumber, configuration: config } };
  }
}

export function layoutWriter(name: LayoutName): LayoutWriter {
  switch (name) {
    case 'bundle':
      return new BundleLayout();
    case 'companion':
      return new CompanionLayout();
    case 'skill-creator':
      return new SkillCreatorLayout();
  }
}
