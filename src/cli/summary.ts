import type { Cli } from './program.js';
import { summarizeRun } from '../runs/summary.js';
import { runCommand } from './errors.js';
import { dim, printJson } from './format.js';
import { printAttempts, printRunSummary } from './run-summary.js';
import { stringFlags } from './flags.js';
import { summaryMarkdown } from '../report/markdown.js';
import { outputFormat, RUN_NAME_HELP, runLink, runNameOptions, withRunNames, namedPaths } from './run-names.js';

export function registerSummary(cli: Cli): void {
  runNameOptions(cli.command('summary <run>', `Print aggregate metrics of a run, per target and overall. The run is ${RUN_NAME_HELP}`))
    .option('--target <name>', 'Only this target (repeatable); recomputes from the rows')
    .option('--recompute', 'Recompute from index.jsonl instead of reading summary.json')
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
    .option('--format <format>', 'text (default), json or markdown (a job summary: weakest target first, escaped)')
    .option('--json', 'Same as --format json')
    .example('agentv-results summary .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const format = outputFormat(flags);
        return withRunNames([run], flags, async ([r]) => {
          const report = await summarizeRun({
            run: r!.path,
            cwd: (flags.dir as string | undefined) ?? process.cwd(),
            recompute: Boolean(flags.recompute),
            targets: stringFlags('target', flags.target),
          });
          for (const w of report.warnings) process.stderr.write(`warning: ${namedPaths(w, [r!])}\n`);
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
        });
      }),
    );
}
