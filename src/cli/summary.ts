import type { Cli } from './program.js';
import { summarizeRun, SummaryOptionsSchema } from '../runs/summary.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runCommand } from './errors.js';
import { dim, printJson } from './format.js';
import { printAttempts, printRunSummary } from './run-summary.js';
import { summaryMarkdown } from '../report/markdown.js';
import { outputFormat, RUN_NAME_HELP, runLink, runNameOptions, shownAs, withRunNames } from './run-names.js';

export function registerSummary(cli: Cli): void {
  schemaFlags(
    runNameOptions(cli.command('summary <run>', `Print aggregate metrics of a run, per target and overall. The run is ${RUN_NAME_HELP}`)),
    SummaryOptionsSchema,
    {
      except: ['run'],
    },
  )
    .option('--format <format>', 'text (default), json or markdown (a job summary: weakest target first, escaped)')
    .option('--json', 'Same as --format json')
    .example('agentv-results summary .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const format = outputFormat(flags);
        return withRunNames(
          [run],
          flags,
          async ([r]) => {
            const report = await summarizeRun(optionsFromFlags(SummaryOptionsSchema, flags, { run: r!.path, shownAs: shownAs(r!) }));
            for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
            if (format === 'json') {
              printJson(report);
              return;
            }
            if (format === 'markdown') {
              process.stdout.write(summaryMarkdown(report, runLink(r!)));
              return;
            }
            process.stdout.write(`run_id: ${report.run_id}\nexperiment: ${report.experiment}\n`);
            if (report.source === 'recomputed') process.stdout.write(dim(`recomputed from index.jsonl: ${report.reason}`) + '\n');
            process.stdout.write('\n');
            printRunSummary(report.summary);
            if (report.attempts) printAttempts(report.attempts);
          },
          undefined,
          true,
        ); // a results file is summarized as the run it exports to
      }),
    );
}
