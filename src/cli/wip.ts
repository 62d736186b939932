/**
 * `wip <action>`: checkpoint | list | recover | clean. cac cannot match two-word commands, so this
 * one command dispatches its actions itself (ARCHITECTURE.md rule 6).
 */
import type { Cli, CommandBuilder, Flags } from './program.js';
import type { CheckpointResult, WipEvent } from '../wip/index.js';
import {
  checkpointWip,
  CheckpointWipOptionsSchema,
  cleanWipBranches,
  CleanWipBranchesOptionsSchema,
  listWipBranches,
  ListWipBranchesOptionsSchema,
  recoverWipRun,
  RecoverWipRunOptionsSchema,
} from '../wip/verbs.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';
import { dim, green, printJson, table, yellow } from './format.js';
import { progressReporter } from './progress.js';

export function fmtAge(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
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
  const r = await checkpointWip(optionsFromFlags(CheckpointWipOptionsSchema, flags, { runDir: run, onEvent }));
  if (json) printJson(r.events.map((e) => (e.type === 'error' ? { type: e.type, phase: e.phase, error: e.error.message } : e)));
  return r.status;
}

async function listAction(flags: Record<string, unknown>): Promise<number> {
  const progress = progressReporter(flags.fetch !== false ? 'fetching' : 'reading', { quiet: Boolean(flags.json) });
  const listing = await listWipBranches(optionsFromFlags(ListWipBranchesOptionsSchema, flags)).finally(progress.done);
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
  const r = await recoverWipRun(optionsFromFlags(RecoverWipRunOptionsSchema, flags, { source })).finally(progress.done);
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
  const options = optionsFromFlags(CleanWipBranchesOptionsSchema, flags);
  const progress = progressReporter(flags.dryRun ? 'reading' : 'cleaning', { quiet: Boolean(flags.json) });
  const r = await cleanWipBranches(options).finally(progress.done);
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

/** The target flags every `wip` subcommand takes, after its own, and --json. */
function withTarget(b: CommandBuilder, schema: Parameters<typeof schemaFlagsInOrder>[1]): CommandBuilder {
  return schemaFlagsInOrder(b, schema, TARGET_FLAGS_LAST, {
    remote: 'Remote (default: results.remote, else origin)',
    cwd: 'Working directory (the repository and relative paths resolve from here)',
  }).option('--json', 'Machine-readable output');
}

export function registerWip(cli: Cli): void {
  cli.group('wip', 'WIP checkpoints of in-progress runs: checkpoint, list, recover, clean');
  withTarget(
    schemaFlagsInOrder(
      cli.command('wip checkpoint <run-dir>', 'Commit the run workspace as it is now onto its WIP branch (with --watch: keep doing so until the run finishes)'),
      CheckpointWipOptionsSchema,
      ['watch', 'intervalMs', 'everyRows', 'full', 'push'],
    ),
    CheckpointWipOptionsSchema,
  )
    .example('agentv-results wip checkpoint .agentv/results/2026-03-01T10-00-00-000Z --watch')
    .action((runDir: string, flags: Flags) => runCommand(() => checkpointAction(runDir, flags)));
  withTarget(
    schemaFlagsInOrder(cli.command('wip list', 'Local and remote WIP branches with host, run, rows and age'), ListWipBranchesOptionsSchema, ['fetch']),
    ListWipBranchesOptionsSchema,
  )
    .example('agentv-results wip list')
    .action((flags: Flags) => runCommand(() => listAction(flags)));
  withTarget(
    schemaFlagsInOrder(
      cli.command('wip recover <branch-or-run>', 'Rebuild a run workspace from its WIP branch, atomically, on any machine'),
      RecoverWipRunOptionsSchema,
      ['out', 'fetch'],
    ),
    RecoverWipRunOptionsSchema,
  )
    .example('agentv-results wip recover 2026-03-01T10-00-00-000Z')
    .action((arg: string, flags: Flags) => runCommand(() => recoverAction(arg, flags)));
  withTarget(
    schemaFlagsInOrder(cli.command('wip clean', 'Delete WIP branches whose run is published (and that are old enough)'), CleanWipBranchesOptionsSchema, [
      'olderThanMs',
      'forceUnpublished',
      'dryRun',
    ]),
    CleanWipBranchesOptionsSchema,
  )
    .example('agentv-results wip clean --older-than 14d --dry-run')
    .action((flags: Flags) => runCommand(() => cleanAction(flags)));
}
