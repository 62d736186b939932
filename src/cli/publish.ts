import { layoutName } from '../layout/layout-choice.js';
import type { Cli } from './program.js';
import { publish, PublishOptionsSchema } from '../publish/publish.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { bold, dim, green, printJson, yellow } from './format.js';
import { pushLines } from './sync.js';
import { progressReporter } from './progress.js';

export function registerPublish(cli: Cli): void {
  schemaFlags(
    cli.command(
      'publish <run>',
      'Commit a finished run to the results branch (metadata) and the artifacts branch (payloads), without touching your checkout; push when asked',
    ),
    PublishOptionsSchema,
    { except: ['run'], help: { remote: 'Remote to push to (default: results.remote, else origin)' } },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results publish .agentv/results/my-exp/2026-03-01T10-00-00-000Z --push')
    .example('agentv-results publish results.jsonl --experiment nightly --require-push')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter('publishing', { quiet: Boolean(flags.json) });
        // Neither --push nor --no-push: push is absent, and the configuration's auto_push decides.
        const result = await publish({ ...optionsFromFlags(PublishOptionsSchema, flags, { run }), onStep: progress.step }).finally(progress.done);
        if (flags.json) {
          if (result.listing?.warning) process.stderr.write(`warning: ${result.listing.warning}\n`);
          printJson(result);
          return result.push?.classification === 'conflict' ? EXIT.check : undefined;
        }
        const { counts, location } = result;
        if (result.status === 'already-published') process.stdout.write(`${location.runId}: already published (no new commit)\n`);
        else {
          process.stdout.write(
            `${green(result.status === 'updated' ? 'Updated' : 'Published')} ${bold(location.runId)}: ${counts.passed}/${counts.total} passed\n`,
          );
          process.stdout.write(dim(`  ${result.target.resultsBranch} ${result.commits.results.slice(0, 12)}  ${location.path} (${counts.metadata} files)\n`));
          if (result.layout.layout === 'next')
            process.stdout.write(
              dim(
                `  ${result.target.artifactsBranch} ${result.commits.artifacts.slice(0, 12)}  ${counts.payloads} payload${counts.payloads === 1 ? '' : 's'}\n`,
              ),
            );
          process.stdout.write(dim(`  layout: ${layoutName(result.layout.layout)} — ${result.layout.reason}\n`));
        }
        if (result.push) for (const line of pushLines(result.push)) process.stdout.write(`${line}\n`);
        if (result.listing?.warning) process.stderr.write(yellow(`warning: ${result.listing.warning}\n`));
        for (const w of result.wip) {
          process.stdout.write(
            w.status === 'deleted'
              ? dim(`  WIP branch ${w.branch} deleted: the run is published\n`)
              : yellow(`  WIP branch ${w.branch} kept: ${w.note ?? w.status}\n`),
          );
        }
        // Set aside on a sync branch: exit 1 (ARCHITECTURE.md, exit codes).
        return result.push?.classification === 'conflict' ? EXIT.check : undefined;
      }),
    );
}
