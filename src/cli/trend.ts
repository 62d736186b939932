import type { Cli } from './program.js';
import { PublishedListFlagsSchema, seriesName, trend, TrendOptionsSchema, type TrendReport } from '../trend/index.js';
import { EXIT } from './errors.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { bold, dim, green, printJson, red, table, yellow } from './format.js';
import { runReadCommand } from './list.js';
import { progressReporter } from './progress.js';
import { trendMarkdown } from '../trend/markdown.js';
import { outputFormat, RUN_NAME_HELP, withRunNames } from './run-names.js';

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
  const cmd = cli.command(
    'trend [...runs]',
    `Score trend over runs (the runs given — each ${RUN_NAME_HELP} —, the local .agentv/results/ runs, or --published ones): least-squares slope of the mean score per run, classified improving / stable / degrading as agentv trend does. One series of every target pooled (agentv trend without --target) unless --by-target / --by-experiment split it`,
  );
  schemaFlags(cmd, TrendOptionsSchema, { except: ['cwd'] });
  schemaFlags(cmd, PublishedListFlagsSchema);
  schemaFlags(cmd, TrendOptionsSchema, { only: ['cwd'] })
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
        const options = optionsFromFlags(TrendOptionsSchema, flags);
        const list = optionsFromFlags(PublishedListFlagsSchema, flags);
        return withRunNames(runs, flags, async (resolved) => {
          const progress = progressReporter(flags.published ? 'reading the published runs' : 'reading the runs', { quiet: format === 'json' });
          const report = await trend({
            ...options,
            // A published run named on the command line is read from a scratch copy: given with its run id, as --published names it.
            sources: resolved.map((r) => (r.runId === null ? r.path : { path: r.path, runId: r.runId })),
            list,
          }).finally(progress.done);
          for (const w of report.warnings) process.stderr.write(yellow(`warning: ${w}`) + '\n');
          if (report.read) process.stderr.write(dim(report.read) + '\n');
          if (format === 'json') printJson(report);
          else if (format === 'markdown') process.stdout.write(trendMarkdown(report));
          else printReport(report);
          return report.triggered ? EXIT.check : EXIT.ok;
        });
      }),
    );
}
