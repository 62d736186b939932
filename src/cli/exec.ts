/**
 * `exec -- <command…>`: run an eval command, checkpoint its run while it runs, publish it when it
 * exits, and exit with the command's status.
 */
import type { Cli } from './program.js';
import { execRun, ExecOptionsSchema } from '../daemon/exec.js';
import { createLogger, LoggerOptionsSchema } from '../daemon/log.js';
import { exitCodeFor, runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';

export function registerExec(cli: Cli): void {
  const cmd = cli.command(
    'exec [...command]',
    'Run an eval command, checkpoint its run workspace while it runs, publish it when it exits (put the command after --)',
  );
  schemaFlagsInOrder(cmd, ExecOptionsSchema, ['out', 'root', 'intervalMs', 'everyRows', 'push']).option('--quiet', 'Only warnings and errors from exec itself');
  schemaFlagsInOrder(cmd, LoggerOptionsSchema, ['format'], { format: "text or json (exec's own lines, on stderr)" });
  schemaFlagsInOrder(cmd, ExecOptionsSchema, TARGET_FLAGS_LAST, {
    remote: 'Remote (default: results.remote, else origin)',
    cwd: 'Working directory (the command runs here; the repository is found from here)',
  })
    .example(
      'agentv-results exec --out .agentv/results/nightly/2026-03-01T10-00-00-000Z -- agentv eval evals/ --output .agentv/results/nightly/2026-03-01T10-00-00-000Z',
    )
    .example('agentv-results exec --interval 60 -- agentv eval evals/')
    .action((positional: string[], flags: Record<string, unknown>) =>
      runCommand(async () => {
        const dashed = (flags['--'] as string[] | undefined) ?? [];
        const command = dashed.length > 0 ? dashed : positional;
        if (command.length === 0) throw new UsageError('exec needs a command after --, e.g. agentv-results exec -- agentv eval evals/');
        // --quiet is the logger's level: only warnings and errors.
        const logger = createLogger(optionsFromFlags(LoggerOptionsSchema, flags, { level: flags.quiet ? 'warn' : 'info' }, { only: ['format'] }));
        const options = optionsFromFlags(ExecOptionsSchema, flags, { command, logger, handleSignals: true });
        const report = await execRun(options); // a command that cannot be started is a CommandError: an input problem (exit 2)
        // The command's own status wins; when it succeeded, a failure to publish is reported.
        if (report.status !== 0 || !report.failure) return report.status;
        process.stderr.write(`agentv-results: ${report.failure.message}\n`);
        return report.failure.cause !== undefined ? exitCodeFor(report.failure.cause) : report.failure.code;
      }),
    );
}
