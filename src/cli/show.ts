import type { Cli } from './program.js';
import { showCases, ShowOptionsSchema, type CaseDetails } from '../runs/show.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runCommand } from './errors.js';
import { verdictText } from './flags.js';
import { bold, int, money, printJson, seconds } from './format.js';
import { feedbackLines } from './feedback-lines.js';
import { RUN_NAME_HELP, runFileShown, runNameOptions, withRunName } from './run-names.js';
import type { FeedbackNote } from '../merge/index.js';
import { formatAttemptRate, formatPassK } from '../model/attempt-stats.js';

/** The first line of a text, cut at 80 characters, for one line of output. */
function oneLine(text: string): string {
  const first = text.trim().split('\n')[0] ?? '';
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}

function printCase(c: CaseDetails & { feedback: FeedbackNote[] }, at: (rel: string) => string, showPaths: boolean): void {
  const variant = c.variant === null ? '' : `, variant ${c.variant}`;
  const out: string[] = [];
  out.push(
    `${bold(c.test_id)}  (suite ${c.suite}, target ${c.target}${c.source_target !== c.target ? ` from ${c.source_target}` : ''}, attempt ${c.attempt}${variant})`,
  );
  out.push(`  verdict     ${verdictText(c.verdict)} (${c.execution_status})   score ${c.score.toFixed(3)}`);
  const usage = c.token_usage ? ` (in ${int(c.token_usage.input)}, out ${int(c.token_usage.output)}, cached ${int(c.token_usage.cached)})` : '';
  out.push(
    `  duration    ${seconds(c.duration_ms)}   tokens ${int(c.total_tokens)}${usage}${c.usage_source ? ` [${c.usage_source}]` : ''}   cost ${money(c.cost_usd)}`,
  );
  out.push(`  assertions  ${c.assertions.passed}/${c.assertions.total} passed${c.attempts ? ' (the attempt the score is from)' : ''}`);
  if (c.attempts) {
    const a = c.attempts;
    out.push(`  attempts    ${formatAttemptRate(a.passed_samples, a.total_samples)}${a.strategy ? `, ${a.strategy}` : ''}   ${formatPassK(a)}`);
    for (const x of a.list) {
      const answer = x.answer === null ? '' : `  ${oneLine(x.answer)}`;
      const transcript = showPaths && x.transcript ? `  [${at(x.transcript)}]` : '';
      out.push(
        `    #${x.index + 1}  ${verdictText(x.verdict).padEnd(5)} ${x.score === null ? '—    ' : x.score.toFixed(3)}${x.error ? `  error: ${oneLine(x.error)}` : ''}${answer}${transcript}`,
      );
    }
  }
  if (c.tool_calls) {
    const by = Object.entries(c.tool_calls.by_tool)
      .map(([tool, n]) => `${tool} ${n}`)
      .join(', ');
    out.push(`  tool calls  ${c.tool_calls.total}${by ? ` (${by})` : ''}`);
  } else {
    out.push('  tool calls  — (metrics.json missing)');
  }
  if (c.graders.length > 0) out.push(`  graders     ${c.graders.map((g) => `${g.name} ${g.score.toFixed(2)}${g.verdict ? ` ${g.verdict}` : ''}`).join(', ')}`);
  if (c.error) out.push(`  error       ${c.error}`);
  out.push(`  timestamp   ${c.timestamp ?? '—'}`);
  const files: [string, string | null][] = [
    ['result', c.paths.result],
    ['grading', c.paths.grading],
    ['metrics', c.paths.metrics],
    ['timing', c.paths.timing],
    ['transcript', c.paths.transcript],
    ['raw', c.paths.transcript_raw],
    ['answer', c.paths.answer],
    ['diff', c.paths.file_changes],
  ];
  if (!showPaths) {
    process.stdout.write(out.join('\n') + '\n');
    return;
  }
  out.push(`  files       ${at(c.paths.result_dir)}/`);
  // Sidecars inside the attempt directory are shown relative to it; any others in full.
  const inDir = (path: string) => (path.startsWith(`${c.paths.result_dir}/`) ? path.slice(c.paths.result_dir.length + 1) : at(path));
  for (const [label, path] of files) if (path) out.push(`    ${label.padEnd(10)} ${inDir(path)}`);
  for (const line of feedbackLines(c.feedback, '  ')) out.push(line);
  process.stdout.write(out.join('\n') + '\n');
}

export function registerShow(cli: Cli): void {
  const command = schemaFlags(
    runNameOptions(cli.command('show <run>', `Display case-level rows of a run with their sidecars' key facts. The run is ${RUN_NAME_HELP}`)),
    ShowOptionsSchema,
    { only: ['testIds', 'targets', 'cwd'] },
  ).option('--json', 'Machine-readable output (paths relative to the run directory)');
  schemaFlags(command, ShowOptionsSchema, { only: ['skipUnsafe'] })
    .example('agentv-results show .agentv/results/my-eval/2026-03-14T10-32-00-000Z --test-id "code-review-*"')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const opts = optionsFromFlags(ShowOptionsSchema, flags, { run });
        // The working directory the verb resolves from (the schema's default when --dir is not given) also places the paths shown.
        const cwd = ShowOptionsSchema.shape.cwd.parse(opts.cwd);
        const { value: report, run: named } = await withRunName(
          run,
          flags,
          (path, shownAs) => showCases({ ...opts, run: path, shownAs }),
          // A results file is read as the run it exports to.
          { deriveResultsFiles: true },
        );
        for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
        if (flags.json) {
          printJson(report);
          return;
        }
        const at = (rel: string) => runFileShown(cwd, named, report.dir, rel);
        const tags = report.tags.length > 0 ? `   tags: ${report.tags.join(' ')}` : '';
        process.stdout.write(`run_id: ${report.run_id}   ${report.cases.length} case${report.cases.length === 1 ? '' : 's'}${tags}\n\n`);
        report.cases.forEach((c, i) => {
          if (i > 0) process.stdout.write('\n');
          printCase(c, at, report.layout === 'bundle');
        });
      }),
    );
}
