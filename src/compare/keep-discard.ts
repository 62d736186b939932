/**
 * The agentv-bench skill's automated keep/discard rules, applied to a compare summary:
 *
 * 1. wins > losses                                          -> keep
 * 2. mean_delta == 0 and the candidate artifact is simpler  -> keep
 * 3. otherwise                                              -> discard
 *
 * The agentv-bench skill's table lists "wins <= losses -> discard" before the simplicity rule; read literally
 * that rule could never apply, so, as its autoresearch loop spells out, the simplicity rule is
 * checked before discarding. "Simpler" is measured as the skill says: a file by its line count, a
 * directory by the total bytes of the files in it (`du -sb` without directory overhead; symbolic
 * links are not followed). Both artifacts must be of the same kind.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InputError } from '../errors/input-error.js';
import { readRegularFile } from '../util/safe-open.js';
import { absentAs } from '../errors/errors.js';
import * as z from 'zod';
import { parseArgs } from '../options/verb-options.js';

export interface ArtifactMeasure {
  path: string;
  kind: 'file' | 'directory';
  /** `lines` for a file, `bytes` for a directory. */
  unit: 'lines' | 'bytes';
  size: number;
}

export interface Decision {
  decision: 'keep' | 'discard';
  rationale: string;
  /** Which rule decided. */
  rule: 'wins_over_losses' | 'simpler_at_equal_score' | 'discard';
  artifacts?: { baseline: ArtifactMeasure; candidate: ArtifactMeasure };
}

/** `decide`'s options: the two artifacts of the simplicity rule, and where their paths resolve from. */
export const DecideOptionsSchema = z.strictObject({
  baselineArtifact: z.string().optional(),
  candidateArtifact: z.string().optional(),
  cwd: z.string().default(() => process.cwd()),
});

export type DecideOptions = z.input<typeof DecideOptionsSchema>;

/** Lines as an editor counts them: a last line without a newline still counts. */
export function countLines(text: Buffer): number {
  let n = 0;
  for (const byte of text) if (byte === 0x0a) n++;
  if (text.length > 0 && text[text.length - 1] !== 0x0a) n++;
  return n;
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

export async function measureArtifact(path: string, cwd = process.cwd()): Promise<ArtifactMeasure> {
  const abs = resolve(cwd, path);
  // absent: reported as an InputError just below; anything else propagates
  const st = await lstat(abs).catch(absentAs(null));
  if (!st) throw new InputError(`artifact ${path}: no such file or directory`);
  if (st.isDirectory()) return { path, kind: 'directory', unit: 'bytes', size: await directoryBytes(abs) };
  if (st.isFile()) return { path, kind: 'file', unit: 'lines', size: countLines(await readRegularFile(abs, { kind: 'run-file' })) };
  throw new InputError(`artifact ${path}: not a regular file or directory`);
}

/** The fields of a compare summary the rules read (a whole compare summary is one). */
export const DecisionSummarySchema = z.looseObject({
  wins: z.number(),
  losses: z.number(),
  ties: z.number(),
  mean_delta: z.number(),
});

export interface DecisionSummary {
  wins: number;
  losses: number;
  ties: number;
  mean_delta: number;
}

/** The keep/discard decision of a comparison (the agentv-bench skill's rules): wins over losses, or a tie with a simpler candidate artifact. */
export async function decide(summary: DecisionSummary, options: DecideOptions = {}): Promise<Decision> {
  const { summary: s, options: opts } = parseArgs('decide', { summary: DecisionSummarySchema, options: DecideOptionsSchema.prefault({}) }, [summary, options]);
  let artifacts: Decision['artifacts'];
  const given = [opts.baselineArtifact, opts.candidateArtifact].filter((a) => a !== undefined).length;
  if (given === 1) throw new InputError('pass both --baseline-artifact and --candidate-artifact (or neither)');
  if (given === 2) {
    // Measured even when rule 1 decides, so a mistyped path is reported rather than ignored.
    const baseline = await measureArtifact(opts.baselineArtifact!, opts.cwd);
    const candidate = await measureArtifact(opts.candidateArtifact!, opts.cwd);
    if (baseline.kind !== candidate.kind)
      throw new InputError(
        `the artifacts must both be files or both directories (baseline ${baseline.path} is a ${baseline.kind}, candidate ${candidate.path} a ${candidate.kind})`,
      );
    artifacts = { baseline, candidate };
  }
  const { wins, losses, mean_delta } = s;
  const withArtifacts = (d: Omit<Decision, 'artifacts'>): Decision => (artifacts ? { ...d, artifacts } : d);
  if (wins > losses) return withArtifacts({ decision: 'keep', rule: 'wins_over_losses', rationale: `candidate wins outweigh losses (${wins} > ${losses})` });
  if (mean_delta === 0) {
    if (!artifacts) {
      return {
        decision: 'discard',
        rule: 'discard',
        rationale: 'equal performance (mean_delta 0) and no artifacts to compare for simplicity — pass --baseline-artifact and --candidate-artifact',
      };
    }
    const { baseline: b, candidate: c } = artifacts;
    if (c.size < b.size)
      return withArtifacts({
        decision: 'keep',
        rule: 'simpler_at_equal_score',
        rationale: `equal performance (mean_delta 0) and the candidate is simpler (${c.size} < ${b.size} ${c.unit})`,
      });
    return withArtifacts({
      decision: 'discard',
      rule: 'discard',
      rationale: `equal performance (mean_delta 0) but the candidate is not simpler (${c.size} >= ${b.size} ${c.unit})`,
    });
  }
  const rationale =
    losses > wins
      ? `candidate losses outweigh wins (${losses} > ${wins})`
      : `candidate wins do not outweigh losses (${wins} = ${losses}) and mean_delta is ${mean_delta}`;
  return withArtifacts({ decision: 'discard', rule: 'discard', rationale });
}
