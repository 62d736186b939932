import type { Cli } from './program.js';
import { pull, PullOptionsSchema } from '../branch-read/pull.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runReadCommand } from './list.js';
import { REMOTE_HELP } from './flags.js';
import { publishedIdOf, RUN_NAME_HELP } from './run-names.js';
import { dim, green, printJson } from './format.js';
import { progressReporter } from './progress.js';

export function registerPull(cli: Cli): void {
  schemaFlags(
    cli.command(
      'pull <run_id>',
      `Materialize a published run from the results branch into a run workspace (atomically); payloads with --with-artifacts. The run is ${RUN_NAME_HELP}`,
    ),
    PullOptionsSchema,
    { except: ['runId'], help: { remote: REMOTE_HELP } },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results pull nightly/2026-03-01T10-00-00-000Z --with-artifacts')
    .example('agentv-results pull 2026-01-05T09-00-00-000Z --at 3f2a9c1e0b7d --with-artifacts   # a run removed by retention')
    .action((runId: string, flags: Record<string, unknown>) =>
      runReadCommand(async () => {
        const progress = progressReporter('pulling', { quiet: Boolean(flags.json) });
        const result = await pull(
          optionsFromFlags(PullOptionsSchema, flags, {
            // A run removed by retention is read from history (--at) by the id it had: no listing to look it up in.
            runId: flags.at === undefined ? await publishedIdOf(String(runId), flags) : String(runId),
            onStep: progress.step,
          }),
        ).finally(progress.done);
        if (flags.json) {
          printJson(result);
          return;
        }
        const from =
          result.source === 'local'
            ? result.read.relation === 'local-ahead'
              ? 'the local results branch (ahead of the remote-tracking one)'
              : result.read.relation === 'diverged'
                ? 'the local results branch (it diverged from the remote-tracking one: `agentv-results sync` merges them)'
                : 'the local results branch'
            : result.source === 'archive'
              ? 'the archive branch (rolled over)'
              : result.source === 'history'
                ? 'history'
                : result.read.relation === 'remote-ahead'
                  ? 'the remote-tracking results branch (newer than the local one)'
                  : 'the remote-tracking results branch';
        process.stdout.write(`${green('Pulled')} ${result.runId} from ${from} (${result.commit.slice(0, 12)}) into ${result.dir}\n`);
        process.stdout.write(dim(`  ${result.files} files from the results branch\n`));
        process.stdout.write(dim(`  ${result.read.description}\n`));
        const { pointed, written, fetched, inBucket, fromBucket } = result.payloads;
        const plural = (n: number) => `${n} payload${n === 1 ? '' : 's'}`;
        // Where each payload came from (or stays): the artifacts branch, or the bucket of storage_mode hybrid.
        const sources = [
          written - fromBucket > 0 ? `${plural(written - fromBucket)} from the artifacts branch${fetched ? ' (fetched)' : ''}` : '',
          fromBucket > 0 ? `${plural(fromBucket)} from the object store (results.object_store)` : '',
        ].filter(Boolean);
        const left = [
          pointed - inBucket > 0 ? `${plural(pointed - inBucket)} left on the artifacts branch` : '',
          inBucket > 0 ? `${plural(inBucket)} left in the object store` : '',
        ].filter(Boolean);
        if (pointed > 0) {
          process.stdout.write(
            dim(
              written > 0
                ? `  ${sources.join(', ')}, sha256 and size verified\n`
                : `  ${left.join(', ')} (index.jsonl points at them; --with-artifacts to get them)\n`,
            ),
          );
        }
      }),
    );
}
