import type { Cli } from './program.js';
import { combineRuns, type OnDuplicate } from '../runs/combine.js';
import { oneOf, runCommand } from './errors.js';
import { printJson } from './format.js';
import { printRunSummary } from './run-summary.js';
import { displayPath, stringFlag } from './flags.js';
import { RUN_NAME_HELP, runNameOptions, withRunNames } from './run-names.js';

export function registerCombine(cli: Cli): void {
  runNameOptions(
    cli.command(
      'combine <...runs>',
      `Combine partial runs (e.g. CI shards) into a new run workspace; a folder holding runs (shards as downloaded, of AgentV 5 or 4.42) stands for the runs in it. Each run is ${RUN_NAME_HELP}`,
    ),
  )
    .option('--out <dir>', 'New run directory; must not exist or be empty (default: .agentv/results/<run_id>)')
    .option('--experiment <name>', 'Experiment label of the combined run; required when the sources span experiments')
    .option(
      '--on-duplicate <policy>',
      'Same case (test_id, target, attempt, variant) in two sources: error | latest (the later timestamp wins; ties: the later source)',
      { default: 'error' },
    )
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
    .option('--json', 'Machine-readable output')
    .example('agentv-results combine shard-1 shard-2 --out .agentv/results/my-eval/combined')
    .example('agentv-results combine shards/ --experiment ci --out run')
    .action((runs: string[], flags: Record<string, unknown>) =>
      runCommand(async () => {
        const cwd = (flags.dir as string | undefined) ?? process.cwd();
        const onDuplicate = oneOf<OnDuplicate>('on-duplicate', flags.onDuplicate, ['error', 'latest'], 'error');
        const result = await withRunNames(
          runs,
          flags,
          (named) =>
            combineRuns({
              sources: named.map((r) => r.path),
              out: stringFlag('out', flags.out),
              experiment: stringFlag('experiment', flags.experiment),
              onDuplicate,
              cwd,
            }),
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
