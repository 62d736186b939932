import type { Cli } from './program.js';
import { exportRun, type DuplicatePolicy } from '../runs/export/export.js';
import { LAYOUTS, type LayoutName } from '../runs/export/output-layouts.js';
import { numberFlag, oneOf, runCommand } from './errors.js';
import { printJson } from './format.js';
import { printRunSummary } from './run-summary.js';
import { progressReporter } from './progress.js';
import { RUN_NAME_HELP, runNameOptions, withRunName } from './run-names.js';

export function registerExport(cli: Cli): void {
  runNameOptions(cli.command('export <source>', `Derive a run's artifacts from AgentV results. The run is ${RUN_NAME_HELP}`))
    .option('--out <dir>', "Output directory (default: .agentv/results/<run_id>, where AgentV lists runs; the run id is the earliest row's timestamp)")
    .option('--layout <layout>', 'bundle (run workspace) | companion (grading/, timing.json, benchmark.json) | skill-creator (iteration-1/eval-N/...)', {
      default: 'bundle',
    })
    .option('--experiment <name>', 'Experiment (result group) name; default: the input file name')
    .option('--duplicate-policy <policy>', 'When a result identity is already present: update | skip | error', { default: 'update' })
    .option('--projection-bundle', 'Also write projection_bundle.json built from the emitted index')
    .option('--dry-run', 'Print the projection bundle JSON and write nothing')
    .option('--include-raw-content', 'Include raw prompt/output payloads (transcript-raw.jsonl, bundle raw fields); excluded by default')
    .option('--skip-invalid', 'Skip malformed lines with a warning instead of failing')
    .option('--threshold <score>', 'Score at or above which a result passes when the row has no verdict', { default: 0.8 })
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
    .option('--json', 'Machine-readable output')
    .example('agentv-results export results.jsonl')
    .example('agentv-results export results.jsonl --out ./run --layout skill-creator')
    .action((source: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const layout = oneOf<LayoutName>('layout', flags.layout, LAYOUTS, 'bundle');
        const duplicatePolicy = oneOf<DuplicatePolicy>('duplicate-policy', flags.duplicatePolicy, ['update', 'skip', 'error'], 'update');
        const progress = progressReporter('exporting', { quiet: Boolean(flags.json || flags.dryRun) });
        const { value: result } = await withRunName(
          source,
          flags,
          (path) =>
            exportRun({
              source: path,
              out: flags.out as string | undefined,
              layout,
              experiment: flags.experiment as string | undefined,
              duplicatePolicy,
              projectionBundle: Boolean(flags.projectionBundle),
              dryRun: Boolean(flags.dryRun),
              includeRawContent: Boolean(flags.includeRawContent),
              skipInvalid: Boolean(flags.skipInvalid),
              threshold: numberFlag('threshold', flags.threshold, 0.8),
              cwd: (flags.dir as string | undefined) ?? process.cwd(),
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
