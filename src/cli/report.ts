import type { Cli } from './program.js';
import { generateReport, ReportOptionsSchema } from '../report/index.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { fmtBytes } from '../report/format.js';
import { runCommand } from './errors.js';
import { printJson } from './format.js';
import { progressReporter } from './progress.js';
import { RUN_NAME_HELP, runNameOptions, withRunName } from './run-names.js';

export function registerReport(cli: Cli): void {
  const command = schemaFlags(
    runNameOptions(cli.command('report <run>', `Write a self-contained HTML report of a run. The run is ${RUN_NAME_HELP}`)),
    ReportOptionsSchema,
    { only: ['out', 'cwd'] },
  ).option('--json', 'Machine-readable output: { out, tests, bytes, mode, warnings }');
  schemaFlags(command, ReportOptionsSchema, { only: ['skipUnsafe'] })
    .example('agentv-results report .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .example('agentv-results report .agentv/results/my-eval/2026-03-14T10-32-00-000Z/index.jsonl --out docs/index.html')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter('writing the report', { quiet: Boolean(flags.json), unit: 'rows' });
        const opts = optionsFromFlags(ReportOptionsSchema, flags, { run });
        const { value: result } = await withRunName(
          run,
          flags,
          (path, shownAs) =>
            generateReport({
              ...opts,
              run: path,
              shownAs,
              // A published run is read from a scratch copy removed afterwards: its report goes where the user stands.
              out: opts.out ?? (path === run ? undefined : 'report.html'),
              onProgress: progress.update,
            }),
          // A results file is read as the run it exports to.
          { deriveResultsFiles: true },
        ).finally(progress.done);
        // Warnings never fail the command: the report is written, the user decides what to publish.
        for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
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
