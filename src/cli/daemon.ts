/**
 * `daemon`: checkpoint in-progress runs, publish finished ones, push everything (durable outbox,
 * retries with backoff). One per repository. `--once` processes what is there and exits.
 */
import type { Cli } from './program.js';
import { stringFlag } from './flags.js';
import { webhookFrom } from '../util/webhook.js';
import { runDaemon } from '../daemon/daemon.js';
import { DaemonOptionsSchema } from '../daemon/daemon-options.js';
import { ArchiveScheduleOptionsSchema } from '../daemon/archive-schedule.js';
import { createLogger, LoggerOptionsSchema } from '../daemon/log.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { SERVE_FLAG_FIELDS, serveOptionsFromFlags, startServeFromFlags } from './serve.js';
import { ServeOptionsSchema, type RunningServer } from '../serve/index.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';
import { flagMetaOf } from '../options/verb-options.js';

export function registerDaemon(cli: Cli): void {
  const daemon = cli.command(
    'daemon',
    'Watch the results root: checkpoint runs in progress, publish and push finished ones; queued work survives restarts and offline periods',
  );
  schemaFlagsInOrder(daemon, DaemonOptionsSchema, ['root', 'once', 'intervalMs', 'everyRows', 'poll', 'scanIntervalMs', 'retryMaxMs', 'push']);
  schemaFlagsInOrder(daemon, ArchiveScheduleOptionsSchema, ['everyMs', 'keepDays', 'keepRuns']);
  schemaFlagsInOrder(daemon, LoggerOptionsSchema, ['format']);
  daemon.option(
    '--webhook <url>',
    'POST a JSON event when results go to a sync branch or pushes keep failing (default: AGENTV_RESULTS_WEBHOOK_URL); the URL is never printed',
  );
  schemaFlagsInOrder(daemon, DaemonOptionsSchema, ['webhookAfterMs', ...TARGET_FLAGS_LAST], {
    remote: 'Remote (default: results.remote, else origin)',
    cwd: 'Working directory (the repository and the root resolve from here)',
  })
    .option('--http', 'Also serve the Dashboard and API (as `serve` does) while the daemon runs; takes the serve flags below')
    .example('agentv-results daemon --log-format json')
    .example('agentv-results daemon --http --port 4318')
    .example('agentv-results daemon --once --push');
  // `daemon --http` takes serve's flags as they are (--port, --host, --allow-remote, ...).
  const withHttp = Object.fromEntries(SERVE_FLAG_FIELDS.map((k) => [k, `${flagMetaOf(ServeOptionsSchema.shape[k])?.help ?? ''} (with --http)`]));
  schemaFlagsInOrder(daemon, ServeOptionsSchema, SERVE_FLAG_FIELDS, withHttp);
  daemon.action((flags: Record<string, unknown>) =>
    runCommand(async () => {
      // Every flag is read before anything starts: a value that does not fit is a usage error first.
      const logger = createLogger(optionsFromFlags(LoggerOptionsSchema, flags, {}, { only: ['format'] }));
      const given = optionsFromFlags(DaemonOptionsSchema, flags, {
        archive: archiveFromFlags(flags),
        webhook: webhookFrom(stringFlag('webhook', flags.webhook)),
        logger,
        handleSignals: true,
      });
      const { cwd, remote, configFile, project } = given;
      const serve = flags.http && !given.once ? serveOptionsFromFlags(flags, { cwd, remote, configFile, project }, { only: SERVE_FLAG_FIELDS }) : null;
      let http: RunningServer | null = null;
      if (serve) http = await startServeFromFlags(serve);
      try {
        const report = await runDaemon(given);
        if (report.stoppedBy === 'lock-lost') return 1;
        // --once in CI: work left queued because the remote did not take it is a failure to see.
        if (given.once && report.remoteDown && report.queued > 0) return 3;
        return 0;
      } finally {
        await http?.close();
      }
    }),
  );
}

/** --archive-every with its window, or undefined (no scheduled rollover). */
function archiveFromFlags(flags: Record<string, unknown>) {
  if (flags.archiveEvery === undefined) {
    if (flags.keepDays !== undefined || flags.keepRuns !== undefined) throw new UsageError('--keep-days and --keep-runs go with --archive-every <duration>');
    return undefined;
  }
  return optionsFromFlags(ArchiveScheduleOptionsSchema, flags);
}
