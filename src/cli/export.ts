import type { Cli } from './program.js';
import { exportRun, ExportOptionsSchema } from '../runs/export/export.js';
import { runCommand } from './errors.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { printJson } from './format.js';
import { printRunSummary } from './run-summary.js';
import { progressReporter } from './progress.js';
import { RUN_NAME_HELP, runNameOptions, withRunName } from './run-names.js';

export function registerExport(cli: Cli): void {
  schemaFlags(
    runNameOptions(cli.command('export <source>', `Derive a run's artifacts from AgentV results. The run is ${RUN_NAME_HELP}`)),
    ExportOptionsSchema,
    {
      except: ['source'],
    },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results export results.jsonl')
    .example('agentv-results export results.jsonl --out ./run --layout skill-creator')
    .action((source: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        // A flag value that does not fit is refused before the run is looked up.
        const options = optionsFromFlags(ExportOptionsSchema, flags, { source });
        const progress = progressReporter('exporting', { quiet: Boolean(flags.json || flags.dryRun) });
        const { value: result } = await withRunName(
          source,
          flags,
          (path) =>
            exportRun({
              ...options,
              source: path,
              onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
              onProgress: progress.update,
            }),
          // The file itself is what export derives, with its own options (no scratch export first).
        ).finally(progress.done);
        if (flags.dryRun) {
          printJson(result.bundle);
          return;
        }
        if (flags.json) {
          printJson({
            run_id: result.runId,
            experiment: result.experiment,
            layout: result.layout,
            out: result.outDir,
            rows: result.rows,
            skipped_invalid: result.skippedInvalid,
            duplicates: result.duplicates,
            unresolved_paths: result.unresolvedPaths,
            summary: result.summary,
          });
          return;
        }
        process.stdout.write(
          `Exported ${result.rows} result${result.rows === 1 ? '' : 's'} (${result.layout} layout) to ${result.outDir}\nrun_id: ${result.runId}\n\n`,
        );
        printRunSummary(result.summary);
      }),
    );
}
