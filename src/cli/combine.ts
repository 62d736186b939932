import type { Cli } from './program.js';
import { combineRuns, CombineOptionsSchema } from '../runs/combine.js';
import { runCommand } from './errors.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { printJson } from './format.js';
import { printRunSummary } from './run-summary.js';
import { displayPath } from './flags.js';
import { RUN_NAME_HELP, runNameOptions, withRunNames } from './run-names.js';

export function registerCombine(cli: Cli): void {
  schemaFlags(
    runNameOptions(
      cli.command(
        'combine <...runs>',
        `Combine partial runs (e.g. CI shards) into a new run workspace; a folder holding runs (shards as downloaded, of AgentV 5 or 4.42) stands for the runs in it. Each run is ${RUN_NAME_HELP}`,
      ),
    ),
    CombineOptionsSchema,
    { except: ['sources'] },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results combine shard-1 shard-2 --out .agentv/results/my-eval/combined')
    .example('agentv-results combine shards/ --experiment ci --out run')
    .action((runs: string[], flags: Record<string, unknown>) =>
      runCommand(async () => {
        const opts = optionsFromFlags(CombineOptionsSchema, flags, { sources: runs });
        // The working directory the verb resolves from (the schema's default when --dir is not given) also places the path shown.
        const cwd = CombineOptionsSchema.shape.cwd.parse(opts.cwd);
        const result = await withRunNames(
          runs,
          flags,
          // A published run is read from a scratch copy: given with its run id, which every message names.
          (named) => combineRuns({ ...opts, sources: named.map((r) => (r.runId === null ? r.path : { path: r.path, shownAs: r.runId })) }),
          undefined,
          true, // a results file is combined as the run it exports to
        );
        if (flags.json) {
          printJson(result);
          return;
        }
        const replaced =
          result.duplicates_replaced > 0
            ? ` (${result.duplicates_replaced} duplicate${result.duplicates_replaced === 1 ? '' : 's'} resolved by --on-duplicate latest)`
            : '';
        process.stdout.write(
          `Combined ${result.rows} result${result.rows === 1 ? '' : 's'} from ${result.sources.length} run${result.sources.length === 1 ? '' : 's'} into ${displayPath(cwd, result.out_dir)}${replaced}\n`,
        );
        process.stdout.write(`run_id: ${result.run_id}\nexperiment: ${result.experiment}\n\n`);
        printRunSummary(result.summary);
      }),
    );
}
