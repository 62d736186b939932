/**
 * `exec -- <command…>`: run an eval command, checkpoint its run while it runs, publish it when it
 * exits, and exit with the command's status.
 */
import type { Cli } from './program.js';
import { configFlags, PROJECT_OPTION_HELP } from './flags.js';
import { execRun } from '../daemon/exec.js';
import { createLogger } from '../daemon/log.js';
import { exitCodeFor, numberFlag, oneOf, runCommand, UsageError } from './errors.js';
import { pushFlag } from './wip.js';

export function registerExec(cli: Cli): void {
  cli
    .command('exec [...command]', 'Run an eval command, checkpoint its run workspace while it runs, publish it when it exits (put the command after --)')
    .option('--out <run-dir>', 'The run workspace the command writes (default: any run that appears under --root)')
    .option('--root <dir>', 'Results root to look for the run in when --out is not given (default .agentv/results)')
    .option('--interval <s>', 'Seconds between checkpoints (default 30)')
    .option('--every-rows <n>', 'Also checkpoint after this many new rows (default 50)')
    .option('--push', 'Push results and WIP branches (default: results.auto_push)')
    .option('--no-push', 'Commit locally only')
    .option('--quiet', 'Only warnings and errors from exec itself')
    .option('--log-format <format>', "text or json (exec's own lines, on stderr)")
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the command runs here; the repository is found from here)')
    .example(
      'agentv-results exec --out .agentv/results/nightly/2026-03-01T10-00-00-000Z -- agentv eval evals/ --output .agentv/results/nightly/2026-03-01T10-00-00-000Z',
    )
    .example('agentv-results exec --interval 60 -- agentv eval evals/')
    .action((positional: string[], flags: Record<string, unknown>) =>
      runCommand(async () => {
        const dashed = (flags['--'] as string[] | undefined) ?? [];
        const command = dashed.length > 0 ? dashed : positional;
        if (command.length === 0) throw new UsageError('exec needs a command after --, e.g. agentv-results exec -- agentv eval evals/');
        const logger = createLogger({ format: oneOf('log-format', flags.logFormat, ['text', 'json'] as const, 'text'), level: flags.quiet ? 'warn' : 'info' });
        const report = await execRun({
          command,
          cwd: (flags.dir as string | undefined) ?? process.cwd(),
          remote: flags.remote as string | undefined,
          ...configFlags(flags),
          out: flags.out as string | undefined,
          root: flags.root as string | undefined,
          intervalMs: numberFlag('interval', flags.interval, 30) * 1000,
          everyRows: numberFlag('every-rows', flags.everyRows, 50),
          push: pushFlag(flags),
          logger,
          handleSignals: true,
        }); // a command that cannot be started is a CommandError: an input problem (exit 2)
        // The command's own status wins; when it succeeded, a failure to publish is reported.
        if (report.status !== 0 || !report.failure) return report.status;
        process.stderr.write(`agentv-results: ${report.failure.message}\n`);
        return report.failure.cause !== undefined ? exitCodeFor(report.failure.cause) : report.failure.code;
      }),
    );
}
