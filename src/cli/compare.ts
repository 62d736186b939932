import type { Cli } from './program.js';
import {
  compareRuns,
  CompareOptionsSchema,
  compareTargets,
  CompareTargetsOptionsSchema,
  type CompareReport,
  type MatrixReport,
  type TargetPairReport,
} from '../compare/compare.js';
import { UsageError } from '../errors/cli-errors.js';
import { EXIT, runCommand } from './errors.js';
import { bold, green, printJson, red, table, yellow } from './format.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { compareMarkdown } from '../report/markdown.js';
import { outputFormat, RUN_NAME_HELP, runLink, runNameOptions, withRunNames } from './run-names.js';

const signed = (n: number, digits = 3) => (n > 0 ? '+' : '') + n.toFixed(digits);
const outcomeText = (o: string) => (o === 'win' ? green('win') : o === 'loss' ? red('loss') : 'tie');

function printReport(r: CompareReport): void {
  const headers = ['Test', 'Baseline', 'Candidate', 'Delta', 'Outcome'];
  const rows = r.matched.map((t) => [
    t.target === undefined ? t.test_id : `${t.test_id} (${t.target})`,
    t.score1.toFixed(3),
    t.score2.toFixed(3),
    signed(t.delta),
    outcomeText(t.outcome),
  ]);
  const side = (s: CompareReport['sources']['baseline']) => `${s.source}${s.targets.length > 0 ? ` (${s.targets.join(', ')})` : ''}`;
  process.stdout.write(
    `baseline:  ${side(r.sources.baseline)}\ncandidate: ${side(r.sources.candidate)}\nwin: delta >= ${r.threshold}, loss: delta <= -${r.threshold}\n\n`,
  );
  process.stdout.write(table(headers, rows) + '\n');
  if (r.match === 'test+target' || r.pooled !== null) process.stdout.write(`\n${r.pooled !== null ? yellow(r.match_note) : r.match_note}\n`);
  if (r.unmatched.baseline_only.length > 0) process.stdout.write(`\nonly in baseline:  ${r.unmatched.baseline_only.join(', ')}\n`);
  if (r.unmatched.candidate_only.length > 0)
    process.stdout.write(`${r.unmatched.baseline_only.length > 0 ? '' : '\n'}only in candidate: ${r.unmatched.candidate_only.join(', ')}\n`);
  const s = r.summary;
  const gain = s.mean_normalized_gain === null ? '' : `, mean_normalized_gain=${signed(s.mean_normalized_gain)}`;
  const line = `wins=${s.wins}, losses=${s.losses}, ties=${s.ties}, mean_delta=${signed(s.mean_delta)}${gain} (${s.matched} matched)`;
  process.stdout.write('\n' + bold(s.mean_delta < 0 ? red(line) : line) + '\n');
  if (r.decision) {
    const d = r.decision;
    process.stdout.write(`\nDecision: ${bold(d.decision === 'keep' ? green('KEEP') : red('DISCARD'))}\n  Rationale: ${d.rationale}\n`);
    if (d.artifacts)
      process.stdout.write(
        `  Artifacts: baseline ${d.artifacts.baseline.size} ${d.artifacts.baseline.unit}, candidate ${d.artifacts.candidate.size} ${d.artifacts.candidate.unit}\n`,
      );
  }
}

function printSingleRun(r: MatrixReport | TargetPairReport): void {
  const summaryLine = (p: { summary: CompareReport['summary'] }) =>
    `wins=${p.summary.wins}, losses=${p.summary.losses}, ties=${p.summary.ties}, mean_delta=${signed(p.summary.mean_delta)}`;
  if (r.mode === 'pairwise') {
    process.stdout.write(
      table(
        ['Test', 'Baseline', 'Candidate', 'Delta', 'Outcome'],
        r.matched.map((t) => [t.test_id, t.score1.toFixed(3), t.score2.toFixed(3), signed(t.delta), outcomeText(t.outcome)]),
      ) +
        '\n\n' +
        bold(summaryLine(r)) +
        '\n',
    );
    return;
  }
  process.stdout.write(
    table(
      ['Test', ...r.targets],
      r.matrix.map((row) => [row.test_id, ...r.targets.map((t) => (row.scores[t] === undefined ? '--' : row.scores[t]!.toFixed(3)))]),
    ) + '\n\n',
  );
  for (const p of r.pairwise) process.stdout.write(`${p.baseline} -> ${p.candidate}: ${summaryLine(p)}\n`);
}

export function registerCompare(cli: Cli): void {
  const cmd = runNameOptions(
    cli.command(
      'compare <baseline> [candidate]',
      `Compare two runs as \`agentv compare\` does: tests matched by test_id (the last row of a repeated id counts), per-test delta, wins/losses/ties, mean_delta; exit 1 when mean_delta < 0 (\`gate\` is the per-test CI check). A run is ${RUN_NAME_HELP}. With one run: its targets against each other (--baseline-target a --candidate-target b), or a score matrix of all of them`,
    ),
  );
  // Two runs' flags (compareRuns) and one run's own spellings (compareTargets), in the order the help has always listed them.
  schemaFlags(cmd, CompareOptionsSchema, { only: ['threshold', 'targets', 'baselineTargets', 'candidateTargets'] });
  schemaFlags(cmd, CompareTargetsOptionsSchema, { only: ['baseline', 'candidate', 'targets'] });
  schemaFlags(cmd, CompareOptionsSchema, { only: ['allTargets'] }).option(
    '--older-baseline',
    'Two runs: the older run (earliest row timestamp) is the baseline, whichever is given first (as the Dashboard compares)',
  );
  schemaFlags(cmd, CompareOptionsSchema, { only: ['decide', 'baselineArtifact', 'candidateArtifact', 'cwd'] })
    .option(
      '--format <format>',
      'text (default), json, or markdown with two runs (a PR comment or job summary: losses first, escaped, under 65,536 characters)',
    )
    .option(
      '--json',
      'Same as --format json: agentv compare --json fields plus ours: { matched[], unmatched: {file1, file2, baseline_only, candidate_only}, summary: {total, matched, wins, losses, ties, mean_delta, mean_normalized_gain}, threshold, sources, warnings, decision? }',
    )
    .example('agentv-results compare baseline/index.jsonl candidate/index.jsonl --json')
    .example('agentv-results compare base.jsonl cand.jsonl --decide --baseline-artifact old/SKILL.md --candidate-artifact SKILL.md')
    .action((baseline: string, candidate: string | undefined, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const format = outputFormat(flags);
        if (candidate === undefined) {
          if (format === 'markdown') throw new UsageError('--format markdown compares two runs; give a baseline and a candidate');
          // One run: agentv's spellings (--baseline, --candidate, --targets) win over ours (--baseline-target, …), one target each.
          const ours = optionsFromFlags(
            CompareOptionsSchema,
            flags,
            { baseline: '', candidate: '' },
            { only: ['targets', 'baselineTargets', 'candidateTargets'] },
          );
          const one = (name: string, values: string[] | undefined) => {
            if (values && values.length > 1) throw new UsageError(`--${name}: give one target`);
            return values?.[0];
          };
          const aliases = {
            ...(flags.targets === undefined && ours.targets ? { targets: ours.targets } : {}),
            ...(flags.baseline === undefined ? { baseline: one('baseline-target', ours.baselineTargets) } : {}),
            ...(flags.candidate === undefined ? { candidate: one('candidate-target', ours.candidateTargets) } : {}),
          };
          // The flags are read before the run is resolved: a bad value is the error, whatever the run.
          const options = optionsFromFlags(CompareTargetsOptionsSchema, flags, { run: baseline, ...aliases });
          return withRunNames([baseline], flags, async ([run]) => {
            // A published run is read from a scratch copy: named by its run id from the start.
            const report = await compareTargets({ ...options, run: run!.path, shownAs: run!.runId ?? undefined });
            for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
            if (format === 'json') {
              const { regression: _regression, ...out } = report;
              printJson(out);
            } else {
              printSingleRun(report);
            }
            return report.regression ? EXIT.check : EXIT.ok;
          });
        }
        if (flags.baseline !== undefined || flags.candidate !== undefined || flags.targets !== undefined) {
          throw new UsageError(
            '--baseline, --candidate and --targets name targets of a single run; with two runs use --target, --baseline-target, --candidate-target',
          );
        }
        const options = optionsFromFlags(CompareOptionsSchema, flags, { baseline, candidate, order: flags.olderBaseline ? 'older-first' : 'given' });
        return withRunNames([baseline, candidate], flags, async ([b, c]) => {
          // A published run is read from a scratch copy: named by its run id from the start.
          const shownAs = { baseline: b!.runId ?? undefined, candidate: c!.runId ?? undefined };
          const report = await compareRuns({ ...options, baseline: b!.path, candidate: c!.path, shownAs });
          for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
          const [base, cand] = report.order.swapped ? [c!, b!] : [b!, c!];
          if (format === 'json') {
            const { regression: _regression, ...out } = report;
            printJson(out);
          } else if (format === 'markdown') {
            process.stdout.write(compareMarkdown(report, { baseline: runLink(base), candidate: runLink(cand) }));
          } else {
            printReport(report);
          }
          return report.regression ? EXIT.check : EXIT.ok;
        });
      }),
    );
}
