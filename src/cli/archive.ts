import type { Cli } from './program.js';
import { rolloverAndPush, RolloverAndPushOptionsSchema } from '../archive/push-archive.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { FOUND_HERE, TARGET_FLAGS } from './flags.js';
import { printJson } from './format.js';
import { pushExitCode } from './sync.js';
import { progressReporter } from './progress.js';

/** `archive`: roll runs past the live window over to the per-month archive branches. */
export function registerArchive(cli: Cli): void {
  const builder = cli.command(
    'archive',
    'Move runs past the live window off agentv/results/v1 to agentv/results-archive/v1/<YYYY-MM> (no force, nothing rewritten)',
  );
  schemaFlags(builder, RolloverAndPushOptionsSchema, { only: ['keepDays', 'keepRuns', 'maxListingBytes', 'dryRun', 'push'] });
  schemaFlags(builder, RolloverAndPushOptionsSchema, { only: TARGET_FLAGS, help: FOUND_HERE })
    .option('--json', 'Machine-readable output: { dry_run, archived: [...], live, listing: { before, after, max }, catalogued, refs, push }')
    .example('agentv-results archive --keep-days 14 --dry-run')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter('archiving', { quiet: Boolean(flags.json) });
        const result = await rolloverAndPush(optionsFromFlags(RolloverAndPushOptionsSchema, flags)).finally(progress.done);
        if (flags.json) {
          printJson(result);
        } else {
          const verb = result.dryRun ? 'Would archive' : 'Archived';
          for (const a of result.archived) process.stdout.write(`${verb} ${a.run_id} -> ${a.ref.slice('refs/heads/'.length)}\n`);
          const kb = (n: number): string => `${Math.round(n / 1024).toLocaleString('en-US')} KiB`;
          const listed =
            result.listing.max > 0 ? `; AgentV's listing ${kb(result.listing.before)} -> ${kb(result.listing.after)} (budget ${kb(result.listing.max)})` : '';
          process.stdout.write(`${verb} ${result.archived.length} run${result.archived.length === 1 ? '' : 's'}; ${result.live} live${listed}.\n`);
          if (result.catalogued > 0) {
            const n = result.catalogued;
            process.stdout.write(
              `${result.dryRun ? 'Would catalog' : 'Catalogued'} ${n} live run${n === 1 ? '' : 's'} another tool published: \`list\` on every machine reads ${n === 1 ? 'its line' : 'their lines'} instead of ${n === 1 ? 'its' : 'their'} files.\n`,
            );
          }
          if (result.push)
            process.stdout.write(
              result.push.archiveLanded ? `Pushed the archive; live branches: ${result.push.message}\n` : `Not pushed: ${result.push.message}\n`,
            );
        }
        if (!result.push) return EXIT.ok;
        if (!result.push.archiveLanded) return EXIT.git;
        return result.push.live ? pushExitCode(result.push.live) : EXIT.ok;
      }),
    );
}
