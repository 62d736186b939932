import type { Cli } from './program.js';
import { readFeedback, ReadFeedbackOptionsSchema, setFeedback, SetFeedbackOptionsSchema } from '../overlay-write/write.js';
import type { FeedbackNote } from '../merge/index.js';
import { runCommand } from './errors.js';
import { dim, printJson } from './format.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';
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
  const cmd = cli.command(
    'feedback <run_id> [test_id] [text]',
    `Read or leave review feedback on a published run (feedback.json on the results branch). With text: save your note on the test, then push. Without: print the notes (of one test, or all). The run is ${RUN_NAME_HELP}`,
  );
  schemaFlagsInOrder(cmd, SetFeedbackOptionsSchema, ['reviewer', 'expectRevision', 'push']);
  schemaFlagsInOrder(cmd, ReadFeedbackOptionsSchema, ['fetch']);
  schemaFlagsInOrder(cmd, SetFeedbackOptionsSchema, TARGET_FLAGS_LAST, {
    remote: 'Remote (default: results.remote, else origin)',
    configFile: 'Configuration file',
    cwd: 'Working directory (the repository resolves from here)',
  })
    .option('--json', 'Machine-readable output')
    .example('agentv-results feedback 2026-03-14T10-32-00-000Z test-12 "grader too lenient on the diff" --reviewer ana')
    .example('agentv-results feedback 2026-03-14T10-32-00-000Z            # every note on the run')
    .action((runId: string, testId: string | undefined, text: string | undefined, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const id = await publishedIdOf(String(runId), flags);
        if (text === undefined) {
          const r = await readFeedback(optionsFromFlags(ReadFeedbackOptionsSchema, flags, { runId: id, testId }));
          if (flags.json) printJson({ run_id: r.runId, notes: r.notes });
          else for (const l of noteLines(r.notes)) process.stdout.write(l + '\n');
          return 0;
        }
        // `--expect-revision ''` means "only if I have no note yet": an empty value is that revision here, not none.
        const noNoteYet = flags.expectRevision === '' || flags.expectRevision === true;
        const options = optionsFromFlags(SetFeedbackOptionsSchema, flags, { runId: id, testId, text, ...(noNoteYet ? { expectRevision: '' } : {}) });
        const progress = progressReporter('saving feedback', { quiet: Boolean(flags.json) });
        const r = await setFeedback(options).finally(progress.done);
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
