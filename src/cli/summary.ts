import type { Cli } from './program.js';
import { summarizeRun } from '../results/summary.js';
import { runCommand } from './errors.js';
import { dim, printJson } from './format.js';
import { printRunSummary } from './run-summary.js';
import { stringFlags } from './flags.js';

export function registerSummary(cli: Cli): void {
  cli
    .command('summary <run>', 'Print aggregate metrics of a run, per target and overall (a run directory or its index.jsonl)')
    .option('--target <name>', 'Only this target (repeatable); recomputes from the rows')
    .option('--recompute', 'Recompute from index.jsonl instead of reading summary.json')
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
    .option('--json', 'Machine-readable output')
    .example('agentv-results summary .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const report = await summarizeRun({
          run,
          cwd: (flags.dir as string | undefined) ?? process.cwd(),
          recompute: Boolean(flags.recompute),
          targets: stringFlags('target', flags.target),
        });
        for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
        if (flags.json) {
          printJson(report);
          return;
        }
        process.stdout.write(`run_id: ${report.run_id}\nexperiment: ${report.experiment}\n`);
        if (report.source === 'recomputed') process.stdout.write(dim(`recomputed from index.jsonl: ${report.reason}`) + '\n');
        process.stdout.write('\n');
        printRunSummary(report.summary);
      }),
    );
}
