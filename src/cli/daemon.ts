/**
 * `daemon`: checkpoint in-progress runs, publish finished ones, push everything (durable outbox,
 * retries with backoff). One per repository. `--once` processes what is there and exits.
 */
import type { Cli } from './program.js';
import { configFlags, PROJECT_OPTION_HELP, stringFlag } from './flags.js';
import { webhookFrom } from '../util/webhook.js';
import { DEFAULT_NOTIFY_AFTER_MS } from '../daemon/outbox-worker.js';
import { runDaemon } from '../daemon/daemon.js';
import type { ArchiveScheduleOptions } from '../daemon/archive-schedule.js';
import { createLogger } from '../daemon/log.js';
import { numberFlag, oneOf, parseDuration, runCommand, UsageError } from './errors.js';
import { pushFlag } from './wip.js';
import { SERVE_OPTIONS, startServeFromFlags } from './serve.js';
import type { RunningServer } from '../serve/index.js';

export function registerDaemon(cli: Cli): void {
  const daemon = cli
    .command('daemon', 'Watch the results root: checkpoint runs in progress, publish and push finished ones; queued work survives restarts and offline periods')
    .option('--root <dir>', 'Results root to watch (default .agentv/results)')
    .option('--once', 'Process what is there (checkpoint, publish, push the queue) and exit — for cron and CI')
    .option('--interval <s>', 'Seconds between checkpoints of a run in progress (default 30)')
    .option('--every-rows <n>', 'Also checkpoint after this many new rows (default 50)')
    .option('--poll', 'Poll the root instead of using file-system events')
    .option('--scan-interval <s>', 'Seconds between rescans of the root (default 30 with events, 2 when polling)')
    .option('--retry-max <s>', 'Longest wait between retries while the remote is unreachable (default 60)')
    .option('--push', 'Push results and WIP branches (the default: the daemon publishes and pushes)')
    .option('--no-push', 'Commit locally only, push nothing')
    .option(
      '--archive-every <duration>',
      'Also roll runs past the live window over to the month archives this often (and apply results.retention when it is configured), e.g. 1d or 6h (off unless given)',
    )
    .option('--keep-days <n>', 'With --archive-every: keep runs of the last n days live (default 30)')
    .option('--keep-runs <n>', 'With --archive-every: keep at most the n newest runs live (default 200)')
    .option('--log-format <format>', 'text or json (one JSON object per line, on stderr)')
    .option(
      '--webhook <url>',
      'POST a JSON event when results go to a sync branch or pushes keep failing (default: AGENTV_RESULTS_WEBHOOK_URL); the URL is never printed',
    )
    .option('--webhook-after <duration>', 'How long pushes must fail before the webhook hears of it, once per outage (default 30m)')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository and the root resolve from here)')
    .option('--http', 'Also serve the Dashboard and API (as `serve` does) while the daemon runs; takes the serve flags below')
    .example('agentv-results daemon --log-format json')
    .example('agentv-results daemon --http --port 4318')
    .example('agentv-results daemon --once --push');
  // `daemon --http` takes serve's flags as they are (--port, --host, --allow-remote, ...).
  for (const [flag, help] of SERVE_OPTIONS) daemon.option(flag, `${help} (with --http)`);
  daemon.action((flags: Record<string, unknown>) =>
    runCommand(async () => {
      const cwd = (flags.dir as string | undefined) ?? process.cwd();
      let http: RunningServer | null = null;
      if (flags.http && !flags.once) http = await startServeFromFlags(flags, { cwd, remote: flags.remote as string | undefined, ...configFlags(flags) });
      try {
        return await daemonAction(flags);
      } finally {
        await http?.close();
      }
    }),
  );
  async function daemonAction(flags: Record<string, unknown>): Promise<number> {
    const logger = createLogger({ format: oneOf('log-format', flags.logFormat, ['text', 'json'] as const, 'text') });
    const retryMax = numberFlag('retry-max', flags.retryMax, 60) * 1000;
    const scan = flags.scanInterval === undefined ? undefined : numberFlag('scan-interval', flags.scanInterval, 30) * 1000;
    const report = await runDaemon({
      cwd: (flags.dir as string | undefined) ?? process.cwd(),
      remote: flags.remote as string | undefined,
      ...configFlags(flags),
      root: flags.root as string | undefined,
      once: Boolean(flags.once),
      push: pushFlag(flags),
      intervalMs: numberFlag('interval', flags.interval, 30) * 1000,
      everyRows: numberFlag('every-rows', flags.everyRows, 50),
      poll: Boolean(flags.poll),
      scanIntervalMs: scan,
      backoff: { baseMs: Math.min(1_000, retryMax), capMs: retryMax },
      archive: archiveFlags(flags),
      webhook: webhookFrom(stringFlag('webhook', flags.webhook)),
      webhookAfterMs: parseDuration('webhook-after', flags.webhookAfter, DEFAULT_NOTIFY_AFTER_MS),
      logger,
      handleSignals: true,
    });
    if (report.stoppedBy === 'lock-lost') return 1;
    // --once in CI: work left queued because the remote did not take it is a failure to see.
    if (flags.once && report.remoteDown && report.queued > 0) return 3;
    return 0;
  }
}

/** --archive-every with its window, or undefined (no scheduled rollover). */
function archiveFlags(flags: Record<string, unknown>): ArchiveScheduleOptions | undefined {
  if (flags.archiveEvery === undefined) {
    if (flags.keepDays !== undefined || flags.keepRuns !== undefined) throw new UsageError('--keep-days and --keep-runs go with --archive-every <duration>');
    return undefined;
  }
  const everyMs = parseDuration('archive-every', flags.archiveEvery, 86_400_000);
  if (everyMs < 60_000) throw new UsageError('--archive-every must be at least 1m (a rollover rereads the catalog and pushes)');
  return {
    everyMs,
    keepDays: flags.keepDays === undefined ? undefined : numberFlag('keep-days', flags.keepDays, 0),
    keepRuns: flags.keepRuns === undefined ? undefined : numberFlag('keep-runs', flags.keepRuns, 0),
  };
}
