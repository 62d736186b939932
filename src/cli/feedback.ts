import type { CAC } from 'cac';
import { OverlayInputError, setFeedback } from '../publish/overlays.js';
import { runCommand, UsageError } from './errors.js';
import { dim, printJson } from './format.js';
import { stringFlag, configFlags, PROJECT_OPTION_HELP } from './flags.js';
import { pushExitCode, pushLines } from './sync.js';

export function registerFeedback(cli: CAC): void {
  cli
    .command('feedback <run_id> <test_id> <text>', 'Leave review feedback on one test of a published run (feedback.json on the results branch), then push')
    .option('--reviewer <name>', 'Reviewer name (default: git user.name)')
    .option('--no-push', 'Commit locally only (a later publish or `sync` pushes it)')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository resolves from here)')
    .option('--json', 'Machine-readable output')
    .example('agentv-results feedback nightly/2026-03-14T10-32-00-000Z test-12 "grader too lenient on the diff" --reviewer ana')
    .action((runId: string, testId: string, text: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        try {
          const r = await setFeedback({
            runId: String(runId),
            testId: String(testId),
            text: String(text),
            reviewer: stringFlag('reviewer', flags.reviewer),
            cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
            remote: stringFlag('remote', flags.remote),
            ...configFlags(flags),
            push: !process.argv.includes('--no-push'),
          });
          if (flags.json) printJson(r);
          else {
            const entry = r.document.entries[String(testId)];
            process.stdout.write(`${r.runId} ${testId}: feedback ${r.changed ? 'saved' : 'unchanged'}${entry ? dim(` (${entry.reviewer}, ${entry.updated_at})`) : ''}\n`);
            if (r.push) for (const l of pushLines(r.push)) process.stdout.write(l + '\n');
          }
          return r.push ? pushExitCode(r.push) : 0;
        } catch (err) {
          if (err instanceof OverlayInputError) throw new UsageError(err.message);
          throw err;
        }
      }),
    );
}
