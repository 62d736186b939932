import type { Cli } from './program.js';
import { formatAttemptRate } from '../model/attempt-stats.js';
import { FailuresOptionsSchema, listFailures } from '../runs/failures.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runCommand } from './errors.js';
import { bold, dim, green, printJson, red } from './format.js';
import { verdictText } from './flags.js';
import { feedbackLines } from './feedback-lines.js';
import { RUN_NAME_HELP, runFileShown, runNameOptions, withRunName } from './run-names.js';

export function registerFailures(cli: Cli): void {
  schemaFlags(
    runNameOptions(
      cli.command(
        'failures <run>',
        `Show only the failing cases of a run (verdict fail or error) with the assertions that failed and their evidence. The run is ${RUN_NAME_HELP}`,
      ),
    ),
    FailuresOptionsSchema,
    { except: ['run'] },
  )
    .option('--json', 'Machine-readable output')
    .example('agentv-results failures .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const opts = optionsFromFlags(FailuresOptionsSchema, flags, { run });
        // The working directory the verb resolves from (the schema's default when --dir is not given) also places the paths shown.
        const cwd = FailuresOptionsSchema.shape.cwd.parse(opts.cwd);
        const { value: report, run: named } = await withRunName(
          run,
          flags,
          (path, shownAs) => listFailures({ ...opts, run: path, shownAs }),
          // A results file is read as the run it exports to.
          { deriveResultsFiles: true },
        );
        for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
        if (flags.json) {
          printJson(report);
          return;
        }
        if (report.failures.length === 0) {
          process.stdout.write(green(`No failing cases (${report.total} case${report.total === 1 ? '' : 's'} in ${report.run_id})`) + '\n');
          return;
        }
        const tags = report.tags.length > 0 ? `  (tags: ${report.tags.join(' ')})` : '';
        process.stdout.write(`${report.failures.length} failing of ${report.total} case${report.total === 1 ? '' : 's'} in ${report.run_id}${tags}\n`);
        for (const f of report.failures) {
          const variant = f.variant === null ? '' : `, variant ${f.variant}`;
          const lines = [
            '',
            `${red('✗')} ${bold(f.test_id)}  (target ${f.target}, attempt ${f.attempt}${variant})  ${verdictText(f.verdict)} (${f.execution_status})  score ${f.score.toFixed(3)}`,
            `    assertions ${f.assertions.passed}/${f.assertions.total} passed`,
            ...(f.attempts
              ? [
                  `    attempts   ${formatAttemptRate(f.attempts.passed_samples, f.attempts.total_samples)}${f.attempts.strategy ? `, ${f.attempts.strategy}` : ''}`,
                ]
              : []),
          ];
          for (const a of f.failed_assertions) {
            lines.push(`    ${red('✗')} ${a.text}`);
            if (a.evidence) lines.push(dim(`        evidence: ${a.evidence}`));
          }
          for (const g of f.failed_graders) {
            lines.push(`    grader ${g.name} (${g.type}) ${g.verdict} ${g.score.toFixed(2)}${g.reasoning ? `: ${g.reasoning}` : ''}`);
          }
          if (f.error) lines.push(`    error: ${f.error}`);
          if (f.grading_problem) lines.push(`    ${red('!')} ${f.grading_problem}`);
          lines.push(...feedbackLines(f.feedback, '    '));
          if (report.layout === 'bundle') lines.push(dim(`    grading: ${runFileShown(cwd, named, report.dir, f.grading_path)}`));
          process.stdout.write(lines.join('\n') + '\n');
        }
      }),
    );
}
