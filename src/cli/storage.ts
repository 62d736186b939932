import type { Cli } from './program.js';
import { migrateStorage } from '../archive/storage-migrate.js';
import { EXIT, runCommand } from './errors.js';
import { configFlags, PROJECT_OPTION_HELP, stringFlag } from './flags.js';
import { dim, printJson } from './format.js';
import { pushExitCode } from './sync.js';
import { progressReporter } from './progress.js';

/** `storage migrate`: copy git-native payloads into the object store of storage_mode hybrid and point at them. */
export function registerStorage(cli: Cli): void {
  cli
    .command(
      'storage migrate',
      'Copy the payloads of runs published in git-native mode to the object store (storage_mode: hybrid) and point at them in one ordinary commit; the artifacts branch keeps them, so old pointers keep working',
    )
    .option('--dry-run', 'List what would move; upload and commit nothing')
    .option('--push', 'Push the results branch afterwards (default: results.auto_push)')
    .option('--no-push', 'Commit locally only')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository is found from here)')
    .option('--json', 'Machine-readable output: { dryRun, manifests, payloads, uploaded, bytes, skipped, commit, push }')
    .example('agentv-results storage migrate --dry-run')
    .example('agentv-results storage migrate --push')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter(flags.dryRun ? 'reading' : 'migrating', { quiet: Boolean(flags.json) });
        const result = await migrateStorage({
          cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
          remote: stringFlag('remote', flags.remote),
          ...configFlags(flags),
          dryRun: !!flags.dryRun,
          push: flags.push === undefined ? undefined : flags.push !== false,
          onStep: progress.step,
        }).finally(progress.done);
        if (flags.json) printJson(result);
        else {
          const verb = result.dryRun ? 'Would move' : 'Moved';
          for (const m of result.manifests) process.stdout.write(`${verb} ${m.payloads} payload${m.payloads === 1 ? '' : 's'} of ${m.path}\n`);
          for (const s of result.skipped) process.stdout.write(dim(`Left ${s.payload} of ${s.path}: ${s.reason}\n`));
          process.stdout.write(
            `${verb} ${result.payloads} payload${result.payloads === 1 ? '' : 's'} to the object store (${result.uploaded} uploaded, ${result.bytes} bytes)${result.commit ? `; commit ${result.commit.slice(0, 12)}` : ''}.\n`,
          );
          if (result.push) process.stdout.write(result.push.landed ? `Pushed: ${result.push.message}\n` : `Not pushed: ${result.push.message}\n`);
        }
        if (result.push) return pushExitCode(result.push);
        return result.skipped.length > 0 ? EXIT.check : EXIT.ok;
      }),
    );
}
