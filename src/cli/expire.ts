import type { Cli } from './program.js';
import { expireAndPush } from '../archive/push-archive.js';
import { describePolicy } from '../layout/retention-log.js';
import { EXIT, runCommand } from './errors.js';
import { PROJECT_OPTION_HELP, stringFlags, windowFlags } from './flags.js';
import { dim, printJson } from './format.js';
import { pushExitCode } from './sync.js';
import { progressReporter } from './progress.js';

/** `expire`: apply the retention policy — delete runs it no longer keeps, live and archived, in ordinary commits. */
export function registerExpire(cli: Cli): void {
  cli
    .command(
      'expire',
      'Apply the retention policy: delete runs no rule keeps (by age, count or tag) from the live and archive branches, in ordinary commits (no force, history keeps them)',
    )
    .option('--keep-days <n>', 'Keep runs of the last n days (default: results.retention.keep_days)')
    .option('--keep-runs <n>', 'Keep the n newest runs, live and archived (default: results.retention.keep_runs)')
    .option('--keep-tag <tag>', 'Keep runs with this tag (repeatable; default: results.retention.keep_tags, else baseline)')
    .option('--dry-run', 'List what would be removed; write nothing (no commit, no fetch)')
    .option('--no-push', 'Commit locally only; `agentv-results sync` pushes later')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository is found from here)')
    .option('--json', 'Machine-readable output: { dry_run, policy, expired: [...], kept_by_tag, skipped, kept, id, refs, push }')
    .example('agentv-results expire --keep-days 365 --dry-run')
    .example('agentv-results expire --keep-runs 5000 --keep-tag baseline --keep-tag release')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const tags = stringFlags('keep-tag', flags.keepTag);
        const progress = progressReporter(flags.dryRun ? 'reading' : 'expiring', { quiet: Boolean(flags.json) });
        const result = await expireAndPush({
          ...windowFlags(flags),
          keepTags: tags.length > 0 ? tags : undefined,
        }).finally(progress.done);
        if (flags.json) {
          printJson(result);
        } else {
          const verb = result.dryRun ? 'Would remove' : 'Removed';
          for (const e of result.expired) process.stdout.write(`${verb} ${e.run_id} (${e.day}) from ${e.branch}\n`);
          for (const k of result.keptByTag) process.stdout.write(dim(`Kept ${k.run_id}: tagged ${k.tags.join(', ')}\n`));
          for (const s of result.skipped) process.stdout.write(dim(`Left ${s.run_id}: ${s.reason}\n`));
          const n = result.expired.length;
          process.stdout.write(`${verb} ${n} run${n === 1 ? '' : 's'}; ${result.kept} kept (${describePolicy(result.policy)}).\n`);
          if (!result.dryRun && result.refs.length > 0) {
            const branches = result.refs.map((r) => r.ref.slice('refs/heads/'.length)).join(', ');
            process.stdout.write(
              dim(
                `One commit per branch (${branches}); git history still holds every removed run: \`agentv-results pull <run_id>\` names the commit to pull it from with --at.\n`,
              ),
            );
          }
          if (result.push) process.stdout.write(result.push.archiveLanded ? `Pushed: ${result.push.message}\n` : `Not pushed: ${result.push.message}\n`);
        }
        if (!result.push) return EXIT.ok;
        if (!result.push.archiveLanded) return EXIT.git;
        return result.push.live ? pushExitCode(result.push.live) : EXIT.ok;
      }),
    );
}
