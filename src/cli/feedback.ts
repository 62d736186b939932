import type { Cli } from './program.js';
import { readFeedback, setFeedback } from '../overlay-write/write.js';
import type { FeedbackNote } from '../merge/index.js';
import { runCommand } from './errors.js';
import { dim, printJson } from './format.js';
import { stringFlag, configFlags, PROJECT_OPTION_HELP } from './flags.js';
import { publishedIdOf, RUN_NAME_HELP } from './run-names.js';
import { pushExitCode, pushLines } from './sync.js';
import { progressReporter } from './progress.js';

function noteLines(notes: FeedbackNote[]): string[] {
  if (notes.length === 0) return ['(no feedback)'];
  const lines: string[] = [];
  for (const n of notes) {
    lines.push(`${n.test_id}  ${n.reviewer}  ${dim(`${n.updated_at}  revision ${n.revision}`)}`);
    for (const l of n.feedback.split('\n')) lines.push(`    ${l}`);
  }
  return lines;
}

export function registerFeedback(cli: Cli): void {
  cli
    .command(
      'feedback <run_id> [test_id] [text]',
      `Read or leave review feedback on a published run (feedback.json on the results branch). With text: save your note on the test, then push. Without: print the notes (of one test, or all). The run is ${RUN_NAME_HELP}`,
    )
    .option('--reviewer <name>', 'Reviewer name (default: git user.name). Each reviewer has their own note per test')
    .option('--expect-revision <rev>', "Only save if your note's revision is still this ('' = only if you have none yet)")
    .option('--no-push', 'Commit locally only (a later publish or `sync` pushes it)')
    .option('--fetch', 'Showing notes: fetch the results branch from the remote first')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository resolves from here)')
    .option('--json', 'Machine-readable output')
    .example('agentv-results feedback 2026-03-14T10-32-00-000Z test-12 "grader too lenient on the diff" --reviewer ana')
    .example('agentv-results feedback 2026-03-14T10-32-00-000Z            # every note on the run')
    .action((runId: string, testId: string | undefined, text: string | undefined, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const common = {
          runId: await publishedIdOf(String(runId), flags),
          cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
          remote: stringFlag('remote', flags.remote),
          ...configFlags(flags),
        };
        if (text === undefined) {
          const r = await readFeedback({ ...common, testId: testId === undefined ? undefined : String(testId), fetch: Boolean(flags.fetch) });
          if (flags.json) printJson({ run_id: r.runId, notes: r.notes });
          else for (const l of noteLines(r.notes)) process.stdout.write(l + '\n');
          return 0;
        }
        const expectRaw = flags.expectRevision;
        const progress = progressReporter('saving feedback', { quiet: Boolean(flags.json) });
        const r = await setFeedback({
          ...common,
          testId: String(testId),
          text: String(text),
          reviewer: stringFlag('reviewer', flags.reviewer),
          expectRevision: expectRaw === undefined ? undefined : String(expectRaw === true ? '' : expectRaw),
          push: flags.push !== false,
        }).finally(progress.done);
        if (flags.json) printJson(r);
        else {
          const mine = r.entry;
          process.stdout.write(
            `${r.runId} ${testId}: feedback ${r.changed ? 'saved' : 'unchanged'}${mine ? dim(` (${mine.reviewer}, ${mine.updated_at}, revision ${mine.revision})`) : ''}\n`,
          );
          if (r.push) for (const l of pushLines(r.push)) process.stdout.write(l + '\n');
        }
        return r.push ? pushExitCode(r.push) : 0;
      }),
    );
}
