import type { Cli } from './program.js';
import { expireAndPush, ExpireAndPushOptionsSchema } from '../archive/push-archive.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { describePolicy } from '../layout/retention-log.js';
import { EXIT, runCommand } from './errors.js';
import { FOUND_HERE, TARGET_FLAGS } from './flags.js';
import { dim, printJson } from './format.js';
import { pushExitCode } from './sync.js';
import { progressReporter } from './progress.js';

/** `expire`: apply the retention policy — delete runs it no longer keeps, live and archived, in ordinary commits. */
export function registerExpire(cli: Cli): void {
  const builder = cli.command(
    'expire',
    'Apply the retention policy: delete runs no rule keeps (by age, count or tag) from the live and archive branches, in ordinary commits (no force, history keeps them)',
  );
  schemaFlags(builder, ExpireAndPushOptionsSchema, { only: ['keepDays', 'keepRuns', 'keepTags', 'dryRun', 'push'] });
  schemaFlags(builder, ExpireAndPushOptionsSchema, { only: TARGET_FLAGS, help: FOUND_HERE })
    .option('--json', 'Machine-readable output: { dry_run, policy, expired: [...], kept_by_tag, skipped, kept, id, refs, push }')
    .example('agentv-results expire --keep-days 365 --dry-run')
    .example('agentv-results expire --keep-runs 5000 --keep-tag baseline --keep-tag release')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const progress = progressReporter(flags.dryRun ? 'reading' : 'expiring', { quiet: Boolean(flags.json) });
        const result = await expireAndPush(optionsFromFlags(ExpireAndPushOptionsSchema, flags)).finally(progress.done);
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
