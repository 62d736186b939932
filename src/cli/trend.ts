import type { Cli } from './program.js';
import { DEFAULT_SLOPE_THRESHOLD, seriesName, trend, type TrendReport } from '../trend/index.js';
import { EXIT, numberFlag } from './errors.js';
import { configFlags, PROJECT_OPTION_HELP, stringFlag } from './flags.js';
import { bold, dim, green, printJson, red, table, yellow } from './format.js';
import { runReadCommand } from './list.js';
import { progressReporter } from './progress.js';
import { trendMarkdown } from '../trend/markdown.js';
import { outputFormat, RUN_NAME_HELP, withRunNames, namedPaths } from './run-names.js';

const signed = (n: number) => (n >= 0 ? '+' : '') + n.toFixed(4);
const directionText = (d: string) => (d === 'improving' ? green(d) : d === 'degrading' ? red(d) : d);

function printReport(r: TrendReport): void {
  for (const s of r.series) {
    process.stdout.write(
      `${bold(seriesName(s))}: ${directionText(s.summary.direction)} (slope ${signed(s.summary.slope)} per run, r² ${s.summary.r_squared.toFixed(3)}, ${s.summary.run_count} runs, ${s.summary.matched_test_count} shared tests)\n`,
    );
    process.stdout.write(
      table(
        ['Run', 'Tests', 'Mean score'],
        s.runs.map((p) => [p.run_id ?? p.label, String(p.matched_test_count), p.mean_score.toFixed(3)]),
      ) + '\n\n',
    );
  }
  for (const s of r.skipped) process.stdout.write(dim(`${seriesName(s)}: not classified — ${s.reason} (${s.runs} run${s.runs === 1 ? '' : 's'})`) + '\n');
  const degrading = r.series.filter((s) => s.summary.direction === 'degrading').length;
  process.stdout.write(
    `${r.series.length} series: ${degrading} degrading (slope <= -${r.slope_threshold}), threshold ${r.slope_threshold}${r.triggered ? red(' — failing (--fail-on-degrading)') : ''}\n`,
  );
}

export function registerTrend(cli: Cli): void {
  cli
    .command(
      'trend [...runs]',
      `Score trend over runs (the runs given — each ${RUN_NAME_HELP} —, the local .agentv/results/ runs, or --published ones): least-squares slope of the mean score per run, classified improving / stable / degrading as agentv trend does. One series of every target pooled (agentv trend without --target) unless --by-target / --by-experiment split it`,
    )
    .option('--published', 'Use the runs published on the results branch (listed from its catalog and pulled), not local ones')
    .option('--experiment <name>', 'Only this experiment')
    .option('--target <name>', 'Only this target')
    .option('--suite <name>', 'Only rows of this suite')
    .option('--by-target', 'One series per target (as agentv trend --target <t> for each) instead of every target pooled')
    .option('--by-experiment', 'One series per experiment instead of every run selected')
    .option('--last <n>', 'Only the n most recent runs of each series (n >= 2)')
    .option('--slope-threshold <x>', `Minimum |slope| per run to call a series improving or degrading (default ${DEFAULT_SLOPE_THRESHOLD}, as agentv trend)`)
    .option('--allow-missing-tests', 'Average each run over all its tests instead of only the tests every run of the series has')
    .option('--fail-on-degrading', 'Exit 1 when any series is degrading')
    .option('--fetch', 'With --published or published run names: fetch the results branch first')
    .option('--remote <name>', 'With --published or published run names: remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (local runs are read from <dir>/.agentv/results/)')
    .option('--format <format>', 'text (default), json or markdown (a job summary: degrading series first, escaped)')
    .option(
      '--json',
      'Same as --format json: { series: [{experiment, target (null: pooled), targets, runs[], summary: {slope, intercept, r_squared, direction, …}, regression}], skipped[], triggered, … }',
    )
    .example('agentv-results trend --fail-on-degrading')
    .example('agentv-results trend --published --experiment nightly --by-target --last 10 --json')
    .example('agentv-results trend .agentv/results/run-a .agentv/results/run-b .agentv/results/run-c')
    .action((runs: string[], flags: Record<string, unknown>) =>
      runReadCommand(async () => {
        const format = outputFormat(flags);
        return withRunNames(runs, flags, async (resolved) => {
          const progress = progressReporter(flags.published ? 'reading the published runs' : 'reading the runs', { quiet: format === 'json' });
          const report = await trend({
            sources: resolved.map((r) => r.path),
            published: Boolean(flags.published),
            list: { fetch: Boolean(flags.fetch), remote: stringFlag('remote', flags.remote), ...configFlags(flags) },
            cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
            experiment: stringFlag('experiment', flags.experiment),
            target: stringFlag('target', flags.target),
            suite: stringFlag('suite', flags.suite),
            byTarget: Boolean(flags.byTarget),
            byExperiment: Boolean(flags.byExperiment),
            last: flags.last === undefined ? undefined : numberFlag('last', flags.last, 0),
            slopeThreshold: numberFlag('slope-threshold', flags.slopeThreshold, DEFAULT_SLOPE_THRESHOLD),
            allowMissingTests: Boolean(flags.allowMissingTests),
            failOnDegrading: Boolean(flags.failOnDegrading),
          }).finally(progress.done);
          // A published run named on the command line was read from a scratch copy: name it by its run id, as --published does.
          for (const s of report.series)
            for (const p of s.runs) {
              const named = resolved.find((r) => r.runId !== null && p.path.startsWith(r.path));
              if (named?.runId) {
                p.run_id = named.runId;
                p.path = `${named.runId}/${p.path.slice(named.path.length + 1)}`;
              }
            }
          for (const w of report.warnings) process.stderr.write(yellow(`warning: ${namedPaths(w, resolved)}`) + '\n');
          if (report.read) process.stderr.write(dim(report.read) + '\n');
          if (format === 'json') printJson(report);
          else if (format === 'markdown') process.stdout.write(trendMarkdown(report));
          else printReport(report);
          return report.triggered ? EXIT.check : EXIT.ok;
        });
      }),
    );
}
