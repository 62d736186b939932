import type { Cli } from './program.js';
import { flaky, FlakyOptionsSchema, type FlakyReport } from '../trend/flaky.js';
import { PublishedListFlagsSchema } from '../trend/index.js';
import { flakyMarkdown } from '../trend/markdown.js';
import { EXIT } from './errors.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { bold, dim, printJson, red, table, yellow } from './format.js';
import { runReadCommand } from './list.js';
import { progressReporter } from './progress.js';
import { outputFormat, RUN_NAME_HELP, withRunNames } from './run-names.js';

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const classText = (c: string) => (c === 'newly failing' ? red(c) : c === 'flaky' ? yellow(c) : c === 'stable fail' ? dim(c) : c);

function printFlaky(r: FlakyReport, all: boolean): void {
  const s = r.summary;
  process.stdout.write(
    `${bold(`${r.runs.length} run${r.runs.length === 1 ? '' : 's'}${r.experiment ? ` of ${r.experiment}` : ''}`)}: ${s.flaky} flaky, ${s['newly failing']} newly failing, ${s['stable fail']} stable fail, ${s['stable pass']} stable pass\n`,
  );
  const shown = all ? r.tests : r.tests.filter((t) => t.class !== 'stable pass');
  if (shown.length > 0)
    process.stdout.write(
      `${table(
        ['Test', 'Target', 'Class', 'Attempts', 'Rate [95%]', 'Flips', 'Verdicts'],
        shown.map((t) => [
          t.test_id,
          t.target ?? '-',
          classText(t.class),
          `${t.passed}/${t.total}`,
          `${pct(t.pass_rate)} [${pct(t.interval.low)}, ${pct(t.interval.high)}]`,
          String(t.flips),
          t.history.map((c) => (c.verdict === 'pass' ? '✓' : c.verdict === 'error' ? '!' : '✗')).join(''),
        ]),
      )}\n`,
    );
  if (!all && s['stable pass'] > 0) process.stdout.write(dim(`${s['stable pass']} stable passes not shown (--all shows them)`) + '\n');
}

export function registerFlaky(cli: Cli): void {
  const cmd = cli.command(
    'flaky [...runs]',
    `Flaky tests named: over the last --last published runs of an experiment (or the runs given, oldest first — each ${RUN_NAME_HELP}), per (test, target) every attempt counted, the verdict flips from run to run, the attempt success rate with its 95% Wilson interval, and a class (newly failing, flaky, stable fail, stable pass), strongest evidence first`,
  );
  schemaFlags(cmd, FlakyOptionsSchema, { only: ['experiment', 'target', 'last'] }).option(
    '--all',
    'List stable passes too (text; --json always has every test)',
  );
  schemaFlags(cmd, PublishedListFlagsSchema, { help: { fetch: 'Fetch the results branch first', remote: 'Remote (default: results.remote, else origin)' } });
  schemaFlags(cmd, FlakyOptionsSchema, { only: ['cwd'] })
    .option('--format <format>', 'text (default), json or markdown (a job summary: strongest evidence first, escaped)')
    .option(
      '--json',
      'Same as --format json: { experiment, runs[], tests: [{test_id, target, class, passed, total, pass_rate, interval, runs, flips, history[]}], summary }',
    )
    .example('agentv-results flaky --experiment nightly --last 20')
    .example('agentv-results flaky .agentv/results/run-a .agentv/results/run-b --json')
    .action((runs: string[], flags: Record<string, unknown>) =>
      runReadCommand(async () => {
        const format = outputFormat(flags);
        const options = optionsFromFlags(FlakyOptionsSchema, flags);
        const list = optionsFromFlags(PublishedListFlagsSchema, flags);
        return withRunNames(runs, flags, async (resolved) => {
          const progress = progressReporter(resolved.length > 0 ? 'reading the runs' : 'reading the published runs', { quiet: format === 'json' });
          const report = await flaky({
            ...options,
            sources: resolved.map((r) => ({ path: r.path, runId: r.runId ?? r.name })),
            list,
          }).finally(progress.done);
          for (const w of report.warnings) process.stderr.write(yellow(`warning: ${w}`) + '\n');
          if (format === 'json') printJson(report);
          else if (format === 'markdown') process.stdout.write(flakyMarkdown(report));
          else printFlaky(report, Boolean(flags.all));
          return EXIT.ok;
        });
      }),
    );
}
