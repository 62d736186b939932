import type { Cli } from './program.js';
import { migrateStorage, MigrateOptionsSchema } from '../archive/storage-migrate.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { FOUND_HERE } from './flags.js';
import { dim, printJson } from './format.js';
import { pushExitCode } from './sync.js';
import { progressReporter } from './progress.js';

/** `storage migrate`: copy git-native payloads into the object store of storage_mode hybrid and point at them. */
export function registerStorage(cli: Cli): void {
  const builder = cli.command(
    'storage migrate',
    'Copy the payloads of runs published in git-native mode to the object store (storage_mode: hybrid) and point at them in one ordinary commit; the artifacts branch keeps them, so old pointers keep working',
  );
  schemaFlags(builder, MigrateOptionsSchema, { only: ['dryRun', 'push'] });
  // The schema spreads the target fields (the working directory first); the command lists --dir last.
  schemaFlags(builder, MigrateOptionsSchema, { only: ['remote', 'configFile', 'project'], help: FOUND_HERE });
  schemaFlags(builder, MigrateOptionsSchema, { only: ['cwd'], help: FOUND_HERE })
    .option('--json', 'Machine-readable output: { dryRun, manifests, payloads, uploaded, bytes, skipped, commit, push }')
    .example('agentv-results storage migrate --dry-run')
    .example('agentv-results storage migrate --push')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter(flags.dryRun ? 'reading' : 'migrating', { quiet: Boolean(flags.json) });
        const result = await migrateStorage(optionsFromFlags(MigrateOptionsSchema, flags, { onStep: progress.step })).finally(progress.done);
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
