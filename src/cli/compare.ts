import type { Cli } from './program.js';
import { compareRuns, compareTargets, DEFAULT_COMPARE_THRESHOLD, type CompareReport, type MatrixReport, type TargetPairReport } from '../compare/compare.js';
import { UsageError } from './errors.js';
import { EXIT, numberFlag, runCommand } from './errors.js';
import { bold, green, printJson, red, table, yellow } from './format.js';
import { stringFlag, stringFlags } from './flags.js';
import { compareMarkdown } from '../report/markdown.js';
import { outputFormat, RUN_NAME_HELP, runLink, runNameOptions, withRunNames, namedPaths } from './run-names.js';

const signed = (n: number, digits = 3) => (n > 0 ? '+' : '') + n.toFixed(digits);
const outcomeText = (o: string) => (o === 'win' ? green('win') : o === 'loss' ? red('loss') : 'tie');
const listFlag = (name: string, parsed: unknown) => {
  const values = stringFlags(name, parsed);
  return values.length > 0 ? values : undefined;
};

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
  runNameOptions(
    cli.command(
      'compare <baseline> [candidate]',
      `Compare two runs as \`agentv compare\` does: tests matched by test_id (the last row of a repeated id counts), per-test delta, wins/losses/ties, mean_delta; exit 1 when mean_delta < 0 (\`gate\` is the per-test CI check). A run is ${RUN_NAME_HELP}. With one run: its targets against each other (--baseline-target a --candidate-target b), or a score matrix of all of them`,
    ),
  )
    .option('--threshold <delta>', 'Win when delta >= threshold, loss when delta <= -threshold, else tie (default 0.1, as agentv compare)')
    .option('--target <name>', 'Compare only this target on both sides (repeatable; use it when a file holds several targets)')
    .option('--baseline-target <name>', 'Narrow the baseline to this target (repeatable). One run: the baseline target (agentv: --baseline)')
    .option('--candidate-target <name>', 'Narrow the candidate to this target (repeatable). One run: the candidate target (agentv: --candidate)')
    .option('--baseline <target>', "One run only, agentv compare's spelling of --baseline-target")
    .option('--candidate <target>', "One run only, agentv compare's spelling of --candidate-target")
    .option('--targets <name>', "One run only: the targets in the matrix (repeatable; agentv compare's spelling of --target)")
    .option('--all-targets', 'Two runs: match rows per (test id, target) instead of test id alone, so every target of a multi-target run is compared')
    .option('--older-baseline', 'Two runs: the older run (earliest row timestamp) is the baseline, whichever is given first (as the Dashboard compares)')
    .option('--decide', 'Print the keep/discard decision (wins > losses -> keep; mean_delta == 0 and the candidate artifact is simpler -> keep; else discard)')
    .option('--baseline-artifact <path>', 'Baseline prompt/skill for the simplicity rule (file: line count; directory: total bytes)')
    .option('--candidate-artifact <path>', 'Candidate prompt/skill for the simplicity rule')
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
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
          const one = (name: string, value: unknown) => {
            const values = listFlag(name, value) ?? [];
            if (values.length > 1) throw new UsageError(`--${name}: give one target`);
            return values[0];
          };
          return withRunNames([baseline], flags, async ([run]) => {
            const report = await compareTargets({
              run: run!.path,
              cwd: (flags.dir as string | undefined) ?? process.cwd(),
              threshold: numberFlag('threshold', flags.threshold, DEFAULT_COMPARE_THRESHOLD),
              targets: listFlag('targets', flags.targets) ?? listFlag('target', flags.target),
              baseline: one('baseline-target', flags.baselineTarget) ?? one('baseline', flags.baseline),
              candidate: one('candidate-target', flags.candidateTarget) ?? one('candidate', flags.candidate),
            });
            for (const w of report.warnings) process.stderr.write(`warning: ${namedPaths(w, [run!])}\n`);
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
        return withRunNames([baseline, candidate], flags, async ([b, c]) => {
          const report = await compareRuns({
            baseline: b!.path,
            candidate: c!.path,
            cwd: (flags.dir as string | undefined) ?? process.cwd(),
            threshold: numberFlag('threshold', flags.threshold, DEFAULT_COMPARE_THRESHOLD),
            targets: listFlag('target', flags.target),
            baselineTargets: listFlag('baseline-target', flags.baselineTarget),
            candidateTargets: listFlag('candidate-target', flags.candidateTarget),
            allTargets: Boolean(flags.allTargets),
            order: flags.olderBaseline ? 'older-first' : 'given',
            decide: Boolean(flags.decide),
            baselineArtifact: stringFlag('baseline-artifact', flags.baselineArtifact),
            candidateArtifact: stringFlag('candidate-artifact', flags.candidateArtifact),
          });
          for (const w of report.warnings) process.stderr.write(`warning: ${namedPaths(w, [b!, c!])}\n`);
          const [base, cand] = report.order.swapped ? [c!, b!] : [b!, c!];
          report.sources.baseline.source = base.runId ?? base.name;
          report.sources.candidate.source = cand.runId ?? cand.name;
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
