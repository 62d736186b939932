import type { Cli } from './program.js';
import { describeSyncBranch } from '../sync/fallback.js';
import type { PushOutcome } from '../sync/push-branches.js';
import { sync, SyncOptionsSchema, type SyncFetch } from '../sync/sync.js';
import type { SyncBranchAdoption } from '../sync/adopt-agentv.js';
import { resolveSyncBranch, ResolveSyncOptionsSchema } from '../sync/resolve.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { REMOTE_HELP } from './flags.js';
import { green, printJson, yellow } from './format.js';
import { progressReporter } from './progress.js';

/** Exit code for a push outcome (ARCHITECTURE.md, exit codes): landed 0, set aside on a sync branch 1, did not land 3. */
export function pushExitCode(outcome: PushOutcome): number {
  if (outcome.landed) return EXIT.ok;
  return outcome.classification === 'conflict' ? EXIT.check : EXIT.git;
}

/** Human lines for a push outcome: the sync branch and its link, or what happens to results that did not land. */
export function pushLines(outcome: PushOutcome): string[] {
  if (outcome.classification === 'conflict' && outcome.syncBranch) return describeSyncBranch(outcome.syncBranch).map((l, i) => (i === 0 ? yellow(l) : l));
  if (outcome.landed) return [green(outcome.message)];
  return [yellow(`not pushed: ${outcome.message}; the results are committed locally and pending (\`agentv-results sync\` retries)`)];
}

/** What the fetch half of a sync brought in, for people. */
export function fetchLine(remote: string, f: SyncFetch): string {
  if (f.conflict) return yellow(`fetched ${remote}: its results conflict with ours here (set aside below)`);
  const changed = (['results', 'artifacts'] as const).filter((b) => f.before[b] !== f.after[b]);
  if (changed.length === 0) return `fetched ${remote}: nothing new`;
  const how = [f.fastForwards > 0 ? `${f.fastForwards} branch${f.fastForwards === 1 ? '' : 'es'} fast-forwarded` : '', f.merges > 0 ? `${f.merges} merged` : '']
    .filter(Boolean)
    .join(', ');
  return green(`fetched ${remote}: took in what others pushed (${how}); reads here now see it`);
}

/** What became of the sync branches the remote held (AgentV's parked runs, another machine's), for people. */
export function syncBranchLines(remote: string, a: SyncBranchAdoption): string[] {
  const lines: string[] = [];
  for (const b of a.adopted)
    lines.push(
      green(
        `took in ${b.branch}: its runs are on the results branch${b.deletedRemote ? `; deleted it on ${remote}` : b.onRemote ? ` (not deleted on ${remote}: it moved since, or is gone)` : ''}`,
      ),
    );
  for (const b of a.pending) lines.push(yellow(`took in ${b.branch}'s runs here; it is deleted once the push lands (\`agentv-results sync\` retries)`));
  for (const b of a.kept) lines.push(yellow(`left ${b.branch}: ${b.reason}; see \`agentv-results status\``));
  return lines;
}

export function registerSync(cli: Cli): void {
  const builder = cli.command(
    'sync',
    'Fetch and take in what others pushed, then push results committed here but not yet on the remote: merges concurrent publishes, never forces; a genuine conflict goes to a sync branch',
  );
  schemaFlags(builder, ResolveSyncOptionsSchema, { only: ['branch'] });
  schemaFlags(builder, SyncOptionsSchema, { help: { remote: REMOTE_HELP, cwd: 'Working directory (the repository resolves from here)' } })
    .option('--json', 'Machine-readable output')
    .example('agentv-results sync')
    .example('agentv-results sync --resolve agentv/results-sync/20260314T103200Z-ci-7-a1b2c3')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        // `--resolve <sync-branch>` (an empty one is none: a plain sync).
        const resolve = optionsFromFlags(ResolveSyncOptionsSchema, flags);
        if (resolve.branch !== undefined) {
          const progress = progressReporter('resolving', { quiet: Boolean(flags.json) });
          const r = await resolveSyncBranch(resolve).finally(progress.done);
          if (flags.json) printJson(r);
          else {
            if (r.status === 'merged' || r.status === 'already-merged') {
              process.stdout.write(
                green(`${r.branch} ${r.status === 'merged' ? 'merged into' : 'was already in'} ${r.resultsBranch} (${(r.commit ?? '').slice(0, 12)})`) + '\n',
              );
              process.stdout.write(
                r.deletedRemote ? `deleted ${r.remote}/${r.branch}\n` : `${r.remote}/${r.branch} was not deleted (gone already, or it moved since)\n`,
              );
              for (const ref of r.keptLocal) process.stdout.write(`kept ${ref} here: it moved since the merge (delete it by hand once checked)\n`);
            } else for (const l of pushLines(r.push)) process.stdout.write(l + '\n');
          }
          return r.status === 'merged' || r.status === 'already-merged' ? EXIT.ok : pushExitCode(r.push) || EXIT.git;
        }
        const progress = progressReporter('syncing', { quiet: Boolean(flags.json) });
        const r = await sync(optionsFromFlags(SyncOptionsSchema, flags)).finally(progress.done);
        if (flags.json) printJson(r);
        else {
          if (r.fetch) process.stdout.write(fetchLine(r.remote!, r.fetch) + '\n');
          for (const l of pushLines(r.push)) process.stdout.write(l + '\n');
          if (r.syncBranches) for (const l of syncBranchLines(r.remote!, r.syncBranches)) process.stdout.write(l + '\n');
          if (r.syncBranchesError) process.stdout.write(yellow(r.syncBranchesError) + '\n');
          if (r.checkpoints) for (const l of syncBranchLines(r.remote!, r.checkpoints)) process.stdout.write(l + '\n');
          if (r.checkpointsError) process.stdout.write(yellow(r.checkpointsError) + '\n');
          for (const d of r.duplicates?.runs ?? [])
            process.stdout.write(`run ${d.experiment} ${d.id} was held twice: ${d.removed ? `removed ${d.removed}, ` : ''}${d.reason}\n`);
        }
        return pushExitCode(r.push);
      }),
    );
}
