import type { Cli } from './program.js';
import { generateReport } from '../report/index.js';
import { fmtBytes } from '../report/format.js';
import { runCommand } from './errors.js';
import { printJson } from './format.js';
import { progressReporter } from './progress.js';
import { namedPaths, RUN_NAME_HELP, runNameOptions, withRunName } from './run-names.js';

export function registerReport(cli: Cli): void {
  runNameOptions(cli.command('report <run>', `Write a self-contained HTML report of a run. The run is ${RUN_NAME_HELP}`))
    .option(
      '-o, --out <file>',
      'Output HTML file; a device or FIFO is written through, a directory gets report.html (default: <run-dir>/report.html; a published run: report.html here)',
    )
    .option('-d, --dir <dir>', 'Working directory used to resolve the run and output paths')
    .option('--json', 'Machine-readable output: { out, tests, bytes, mode, warnings }')
    .option('--skip-unsafe', 'Read a run holding unsafe paths (links out of it, pipes, row paths out of it) with a warning per path instead of refusing it')
    .example('agentv-results report .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .example('agentv-results report .agentv/results/my-eval/2026-03-14T10-32-00-000Z/index.jsonl --out docs/index.html')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter('writing the report', { quiet: Boolean(flags.json), unit: 'rows' });
        const cwd = (flags.dir as string | undefined) ?? process.cwd();
        const { value: result, run: named } = await withRunName(
          run,
          flags,
          (path) =>
            generateReport({
              run: path,
              // A published run is read from a scratch copy removed afterwards: its report goes where the user stands.
              out: (flags.out as string | undefined) ?? (path === run ? undefined : 'report.html'),
              cwd,
              skipUnsafe: flags.skipUnsafe ? true : undefined,
              onProgress: progress.update,
            }),
          // A results file is read as the run it exports to.
          { deriveResultsFiles: true },
        ).finally(progress.done);
        // Warnings never fail the command: the report is written, the user decides what to publish.
        for (const w of result.warnings) process.stderr.write(`warning: ${namedPaths(w, [named])}\n`);
        if (flags.json) {
          printJson(result);
          return;
        }
        // Written through a device or FIFO (e.g. --out /dev/stdout): the line must not land in the report.
        (result.mode === 'through' ? process.stderr : process.stdout).write(
          `Wrote ${result.out} (${result.tests} test${result.tests === 1 ? '' : 's'}, ${fmtBytes(result.bytes)})\n`,
        );
      }),
    );
}
