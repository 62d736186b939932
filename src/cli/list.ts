import type { Cli } from './program.js';
import { listRuns, ListOptionsSchema } from '../branch-read/list.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runCommand } from './errors.js';
import { REMOTE_HELP } from './flags.js';
import { dim, pct, printJson, table, yellow } from './format.js';
import { progressReporter } from './progress.js';

/**
 * runCommand for the reading commands. A ReadError carries its exit-code family in its `code`
 * (read-input 2, read-check 1, read-git 3), so the shared mapping handles it like any other error.
 */
export function runReadCommand(fn: () => Promise<number | void>): Promise<void> {
  return runCommand(fn);
}

export function registerList(cli: Cli): void {
  schemaFlags(
    cli.command('list', 'List the runs published on the results branch (reads the catalog: a few blob reads, never the run trees)'),
    ListOptionsSchema,
    {
      help: { remote: REMOTE_HELP, cwd: 'Working directory (the repository is found from here)' },
    },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results list --since 2026-03-01 --limit 20')
    .example('agentv-results list --fetch --json')
    .action((flags: Record<string, unknown>) =>
      runReadCommand(async () => {
        const options = optionsFromFlags(ListOptionsSchema, flags, { withOverlays: true });
        const progress = progressReporter(options.fetch ? 'fetching' : 'reading', { quiet: Boolean(flags.json) });
        const result = await listRuns(options).finally(progress.done);
        for (const w of result.warnings ?? []) process.stderr.write(yellow(`warning: ${w}\n`));
        if (result.unreadable > 0)
          process.stderr.write(yellow(`warning: ${result.unreadable} catalog line(s) on ${result.branch} could not be read and were skipped\n`));
        if (flags.json) {
          printJson(result);
          return;
        }
        // Runs parked on a sync branch are not in the listing: say where they wait, whatever the filters.
        for (const b of result.syncBranches)
          process.stderr.write(
            yellow(`not listed: runs waiting on ${b.branch} (${b.compare_url ? `review: ${b.compare_url}` : b.review_hint}; then ${b.resolve_command})\n`),
          );
        if (result.runs.length === 0) {
          const none = result.tips.local === null && result.tips.remote === null;
          process.stdout.write(
            none
              ? `nothing published yet: ${result.branch} does not exist here${result.remote ? ` (try --fetch to see what ${result.remote} has)` : ''}\n`
              : `no runs match on ${result.branch}\n`,
          );
          if (!none) process.stdout.write(dim(`${result.read.description}\n`));
          return;
        }
        const showWhere = result.remote !== null && !options.remoteOnly;
        const showTags = result.runs.some((r) => (r.tags?.length ?? 0) > 0 || (r.feedback_notes ?? 0) > 0);
        const overlay = (r: (typeof result.runs)[number]) =>
          [(r.tags ?? []).join(' '), r.feedback_notes ? `${r.feedback_notes} note${r.feedback_notes === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ');
        const headers = [
          'run_id',
          'experiment',
          'day',
          'targets',
          'passed',
          'pass rate',
          ...(showWhere ? ['where'] : []),
          ...(showTags ? ['tags, feedback'] : []),
        ];
        const rows = result.runs.map((r) => [
          r.run_id,
          r.experiment,
          r.day,
          r.targets.join(', '),
          `${r.passed}/${r.total}`,
          pct(r.pass_rate),
          ...(showWhere ? [r.where] : []),
          ...(showTags ? [overlay(r)] : []),
        ]);
        process.stdout.write(table(headers, rows) + '\n');
        const skipped = options.offset ?? 0;
        const shown =
          result.runs.length < result.matched
            ? skipped > 0
              ? ` (showing ${result.runs.length} after the newest ${skipped})`
              : ` (showing the newest ${result.runs.length})`
            : '';
        process.stdout.write(dim(`${result.matched} run${result.matched === 1 ? '' : 's'} on ${result.branch}${shown}\n`));
        process.stdout.write(dim(`${result.read.description}\n`));
      }),
    );
}
