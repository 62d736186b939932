/**
 * `wip <action>`: checkpoint | list | recover | clean. cac cannot match two-word commands, so this
 * one command dispatches its actions itself (ARCHITECTURE.md rule 6).
 */
import type { Cli, CommandBuilder, Flags } from './program.js';
import { configFlags, PROJECT_OPTION_HELP } from './flags.js';
import type { CheckpointResult, WipEvent } from '../wip/index.js';
import { checkpointWip, cleanWipBranches, listWipBranches, recoverWipRun } from '../wip/verbs.js';
import { numberFlag, parseDuration, runCommand, UsageError } from './errors.js';
import { dim, green, printJson, table, yellow } from './format.js';
import { progressReporter } from './progress.js';

export function fmtAge(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** --push / --no-push as typed, or undefined when neither was (the configuration decides). */
export function pushFlag(flags: Flags): boolean | undefined {
  return typeof flags.push === 'boolean' ? flags.push : undefined;
}

function targetOpts(flags: Record<string, unknown>) {
  return {
    cwd: (flags.dir as string | undefined) ?? process.cwd(),
    remote: flags.remote as string | undefined,
    ...configFlags(flags),
  };
}

function describeCheckpoint(r: CheckpointResult): string {
  if (r.status === 'unchanged') return `${r.runId}: nothing new since checkpoint ${r.checkpoint} (${r.rows} rows) on ${r.branch}`;
  const rewrote = r.rewrote ? yellow(' (index.jsonl was rewritten: captured again from the start)') : '';
  return `${green(`checkpoint ${r.checkpoint}`)} of ${r.runId} on ${r.branch}: +${r.addedRows} rows (${r.rows} in total), ${r.files} file${r.files === 1 ? '' : 's'}${rewrote}  ${dim(r.commit.slice(0, 12))}`;
}

async function checkpointAction(run: string | undefined, flags: Record<string, unknown>): Promise<number> {
  if (!run) throw new UsageError('wip checkpoint needs the run workspace: agentv-results wip checkpoint .agentv/results/<experiment>/<timestamp>');
  const json = Boolean(flags.json);
  const say = (line: string): void => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  const onEvent = (e: WipEvent): void => {
    if (e.type === 'checkpoint') {
      say(describeCheckpoint(e.result));
      for (const line of e.result.refused) process.stderr.write(`agentv-results: warning: not checkpointed (publish would refuse it): ${line}\n`);
    } else if (e.type === 'push') say(e.result.classification === 'ok' ? dim(`  ${e.result.message}`) : yellow(`  WIP push did not land: ${e.result.message}`));
    else process.stderr.write(`agentv-results: ${e.phase} failed: ${e.error.message}\n`);
  };
  const r = await checkpointWip({
    ...targetOpts(flags),
    runDir: run,
    push: pushFlag(flags),
    intervalMs: numberFlag('interval', flags.interval, 30) * 1000,
    everyRows: numberFlag('every-rows', flags.everyRows, 50),
    full: Boolean(flags.full),
    watch: Boolean(flags.watch),
    onEvent,
  });
  if (json) printJson(r.events.map((e) => (e.type === 'error' ? { type: e.type, phase: e.phase, error: e.error.message } : e)));
  return r.status;
}

async function listAction(flags: Record<string, unknown>): Promise<number> {
  const progress = progressReporter(flags.fetch !== false ? 'fetching' : 'reading', { quiet: Boolean(flags.json) });
  const listing = await listWipBranches({ ...targetOpts(flags), fetch: flags.fetch !== false }).finally(progress.done);
  if (flags.json) {
    printJson({ remote: listing.remote, remoteError: listing.remoteError, branches: listing.entries.map(({ meta: _meta, ...e }) => e) });
  } else if (listing.entries.length === 0) {
    process.stdout.write('no WIP branches here' + (listing.remote ? ` or on ${listing.remote}` : '') + '\n');
  } else {
    const rows = listing.entries.map((e) => [
      e.branch,
      e.host,
      e.runId ?? '?',
      e.rows ?? '—',
      e.checkpoint ?? '—',
      fmtAge(e.ageSeconds),
      e.writer === 'agentv' ? 'AgentV checkpoint' : e.finished ? 'finished' : 'in progress',
      e.where,
    ]);
    process.stdout.write(table(['branch', 'host', 'run', 'rows', 'checkpoint', 'age', 'run state', 'where'], rows) + '\n');
    for (const e of listing.entries) {
      if (e.refused.length === 0) continue;
      process.stdout.write(
        yellow(`${e.branch}: ${e.refused.length} thing${e.refused.length === 1 ? '' : 's'} not checkpointed (publish would refuse them):\n`),
      );
      for (const line of e.refused.slice(-5)) process.stdout.write(`  ${line}\n`);
    }
  }
  if (listing.remoteError) process.stderr.write(`agentv-results: ${listing.remoteError}\n`);
  return listing.remoteError ? 3 : 0;
}

async function recoverAction(source: string | undefined, flags: Record<string, unknown>): Promise<number> {
  if (!source) throw new UsageError('wip recover needs a WIP branch or a run id (see `agentv-results wip list`)');
  const progress = progressReporter('recovering', { quiet: Boolean(flags.json) });
  const r = await recoverWipRun({ ...targetOpts(flags), source, out: flags.out as string | undefined, fetch: flags.fetch !== false }).finally(progress.done);
  if (flags.json) printJson(r);
  else {
    process.stdout.write(`${green('Recovered')} ${r.runId} from ${r.branch} (checkpoint ${r.checkpoint}, ${r.from}) into ${r.out}\n`);
    process.stdout.write(
      dim(
        `  ${r.rows} rows, ${r.files} files${r.merged ? ', merged with the workspace already there' : ''}${r.duplicatesDropped ? `, ${r.duplicatesDropped} duplicate rows dropped` : ''}\n`,
      ),
    );
    if (!r.finished) process.stdout.write(dim(`  resume the eval into ${r.out}; later checkpoints continue on ${r.branch}\n`));
  }
  if (r.remoteError) process.stderr.write(`agentv-results: ${r.remoteError}\n`);
  return 0;
}

async function cleanAction(flags: Record<string, unknown>): Promise<number> {
  const progress = progressReporter(flags.dryRun ? 'reading' : 'cleaning', { quiet: Boolean(flags.json) });
  const r = await cleanWipBranches({
    ...targetOpts(flags),
    olderThanMs: parseDuration('older-than', flags.olderThan, 14 * 86400 * 1000),
    forceUnpublished: Boolean(flags.forceUnpublished),
    dryRun: Boolean(flags.dryRun),
  }).finally(progress.done);
  if (flags.json) printJson(r);
  else {
    for (const d of r.decisions) {
      const what = `${d.branch} (run ${d.runId ?? '?'}, ${d.rows ?? '?'} rows, last checkpoint ${fmtAge(d.ageSeconds)} ago; local ${d.local?.slice(0, 12) ?? '—'}, remote ${d.remote?.slice(0, 12) ?? '—'})`;
      if (d.action === 'deleted') process.stdout.write(`${d.published ? green('deleted') : yellow('deleted')} ${what}: ${d.reason}\n`);
      else if (d.action === 'would-delete') process.stdout.write(`would delete ${what}: ${d.reason}\n`);
      else if (d.reason !== 'recent') process.stdout.write(dim(`kept ${what}: ${d.reason}\n`));
    }
    const deleted = r.decisions.filter((d) => d.action === 'deleted').length;
    const kept = r.decisions.filter((d) => d.action === 'kept').length;
    process.stdout.write(`${deleted} deleted, ${kept} kept${flags.dryRun ? ' (dry run)' : ''}\n`);
  }
  if (r.remoteError) process.stderr.write(`agentv-results: ${r.remoteError}\n`);
  return r.remoteError ? 3 : 0;
}

/** Options every `wip` subcommand that reaches the repository takes. */
function withTarget(b: CommandBuilder): CommandBuilder {
  return b
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository and relative paths resolve from here)')
    .option('--json', 'Machine-readable output');
}

export function registerWip(cli: Cli): void {
  cli.group('wip', 'WIP checkpoints of in-progress runs: checkpoint, list, recover, clean');
  withTarget(
    cli
      .command('wip checkpoint <run-dir>', 'Commit the run workspace as it is now onto its WIP branch (with --watch: keep doing so until the run finishes)')
      .option('--watch', 'Keep checkpointing until the run finishes or a signal arrives (flushes on SIGINT/SIGTERM)')
      .option('--interval <s>', 'With --watch: seconds between checkpoints (default 30)')
      .option('--every-rows <n>', 'With --watch: also checkpoint after this many new rows (default 50)')
      .option('--full', 'Walk the whole workspace (also files no row points at, and deletions)')
      .option('--push', 'Push the WIP branch (default: results.auto_push)')
      .option('--no-push', 'Do not push'),
  )
    .example('agentv-results wip checkpoint .agentv/results/2026-03-01T10-00-00-000Z --watch')
    .action((runDir: string, flags: Flags) => runCommand(() => checkpointAction(runDir, flags)));
  withTarget(cli.command('wip list', 'Local and remote WIP branches with host, run, rows and age').option('--no-fetch', 'Do not ask the remote'))
    .example('agentv-results wip list')
    .action((flags: Flags) => runCommand(() => listAction(flags)));
  withTarget(
    cli
      .command('wip recover <branch-or-run>', 'Rebuild a run workspace from its WIP branch, atomically, on any machine')
      .option('--out <dir>', 'The workspace to write (default .agentv/results/<run_id>)')
      .option('--no-fetch', 'Do not ask the remote'),
  )
    .example('agentv-results wip recover 2026-03-01T10-00-00-000Z')
    .action((arg: string, flags: Flags) => runCommand(() => recoverAction(arg, flags)));
  withTarget(
    cli
      .command('wip clean', 'Delete WIP branches whose run is published (and that are old enough)')
      .option('--older-than <age>', 'Only branches whose last checkpoint is older (default 14d)')
      .option('--force-unpublished', 'Also delete branches whose run is not published (each is listed)')
      .option('--dry-run', 'Say what would be deleted'),
  )
    .example('agentv-results wip clean --older-than 14d --dry-run')
    .action((flags: Flags) => runCommand(() => cleanAction(flags)));
}
