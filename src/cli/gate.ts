import type { Cli } from './program.js';
import { gateTestName, type GateReport } from '../gate/gate.js';
import { gateCheck, GateCheckOptionsSchema, type GateVerdict } from '../gate/gate-check.js';
import { gateErrorMarkdown, gateMarkdown, gateNoBaselineMarkdown } from '../report/markdown.js';
import { AgentvResultsError } from '../errors/errors.js';
import { EXIT, exitCodeFor, runCommand } from './errors.js';
import { bold, dim, green, printJson, red, table, yellow } from './format.js';
import { progressReporter } from './progress.js';
import { stringFlag } from './flags.js';
import { outputFormat, RUN_NAME_HELP, runLink } from './run-names.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { writeOutputFile } from '../util/output-target.js';
import { pushExitCode, pushLines } from './sync.js';

const signed = (n: number) => (n > 0 ? '+' : '') + n.toFixed(3);
const pText = (p: number) => (p < 0.0001 ? p.toExponential(1) : p.toFixed(4));

function printGate(r: GateReport, baseline: string, candidate: string): void {
  const s = r.summary;
  process.stdout.write(`baseline:  ${baseline}\ncandidate: ${candidate}\n`);
  process.stdout.write(
    `${s.matched} tests compared, mean ${s.baseline_mean.toFixed(3)} -> ${s.candidate_mean.toFixed(3)} (${signed(s.mean_delta)}), tolerance ${r.tolerance}\n`,
  );
  if (r.match === 'test+target' || r.pooled !== null) process.stdout.write(`${r.pooled !== null ? yellow(r.match_note) : dim(r.match_note)}\n`);
  process.stdout.write(`${r.history.applied ? r.history.note : dim(r.history.note)}\n`);
  const attempts = (t: GateReport['regressions'][number]) =>
    t.attempts
      ? `${t.attempts.candidate.passed}/${t.attempts.candidate.total} vs ${t.attempts.history.passed}/${t.attempts.history.total} over ${t.attempts.history.runs} runs (p ${pText(t.attempts.p)})`
      : '';
  const why = (t: GateReport['regressions'][number]) =>
    t.reason === 'verdict' ? `${t.baseline_verdict} -> ${t.candidate_verdict}` : t.reason === 'reliability' ? 'reliability' : 'score';
  const rows = (list: GateReport['regressions']) =>
    list.map((t) => [gateTestName(t) + (t.noisy ? ' [noisy]' : ''), t.baseline.toFixed(3), t.candidate.toFixed(3), signed(t.delta), why(t), attempts(t)]);
  const headers = ['Test', 'Baseline', 'Candidate', 'Delta', 'Why', 'Attempts (candidate vs history)'];
  if (r.regressions.length > 0) process.stdout.write(`\n${red(`regressions (${r.regressions.length})`)}\n${table(headers, rows(r.regressions))}\n`);
  if (r.improvements.length > 0) process.stdout.write(`\n${green(`improvements (${r.improvements.length})`)}\n${table(headers, rows(r.improvements))}\n`);
  if (r.noisy.length > 0)
    process.stdout.write(
      `\n${yellow(`noisy (${r.noisy.length})`)}: their history passes and fails; they fail the gate only when the candidate is improbable even for them\n${table(
        ['Test', 'Candidate', 'History', 'p', 'Regressed'],
        r.noisy.map((t) => [
          gateTestName(t),
          t.candidate ? `${t.candidate.passed}/${t.candidate.total}` : '-',
          `${t.history.passed}/${t.history.total} over ${t.history.runs} runs`,
          t.p === null ? '-' : pText(t.p),
          t.regressed ? 'yes' : 'no',
        ]),
      )}\n`,
    );
  if (r.removed.length > 0) process.stdout.write(`\nonly in the baseline (${r.removed.length}): ${r.removed.map(gateTestName).join(', ')}\n`);
  if (r.new.length > 0) process.stdout.write(`\nonly in the candidate (${r.new.length}): ${r.new.map(gateTestName).join(', ')}\n`);
  process.stdout.write(
    `\n${r.passed ? bold(green('PASS')) : bold(red('FAIL'))}: ${s.regressions} regressed, ${s.improvements} improved, ${s.unchanged} within tolerance\n`,
  );
  for (const f of r.failures) process.stdout.write(`  ${f}\n`);
}

/** The rule's flags, then the output's, then matching and the directory, then where runs are read from (as the help has always listed them). */
const RULE_FLAGS = [
  'tolerance',
  'maxRegressions',
  'history',
  'confidence',
  'newTests',
  'removedTests',
  'targets',
  'baselineTargets',
  'candidateTargets',
  'missingBaseline',
  'updateBaseline',
  'push',
  'webhook',
] as const;
const NAME_FLAGS = ['fetch', 'remote', 'configFile', 'project'] as const;

export function registerGate(cli: Cli): void {
  const cmd = cli.command(
    'gate <baseline> <candidate>',
    `The CI check: fail (exit 1) when a test regresses — its score drops by more than --tolerance, or its verdict flips in a way the score does not explain, or (with --history) its attempts are improbable under its own history, which also spares a noisy test its ordinary draws — or when baseline tests are missing; tests are matched per (test id, target) when a run holds several targets; the mean delta is reported, not decisive; exit 70 is a bug in agentv-results, never a regression. Each run is ${RUN_NAME_HELP}. \`compare\` keeps agentv compare's mean rule`,
  );
  schemaFlags(cmd, GateCheckOptionsSchema, { only: RULE_FLAGS })
    .option('--format <format>', 'text (default), json or markdown (a PR comment or job summary: regressions first, escaped, under 65,536 characters)')
    .option('--json', 'Same as --format json: { passed, failures[], regressions[], improvements[], new_tests[], removed_tests[], summary, tolerance, … }')
    .option(
      '--markdown-out <file>',
      'Also write the Markdown of this one evaluation (the verdict, or why the gate could not decide) to file: JSON on stdout and Markdown for a comment from one run',
    );
  schemaFlags(cmd, GateCheckOptionsSchema, { only: ['allTargets'] });
  schemaFlags(cmd, GateCheckOptionsSchema, { only: ['cwd'], help: { cwd: 'Working directory used to resolve relative paths' } });
  schemaFlags(cmd, GateCheckOptionsSchema, { only: NAME_FLAGS, help: { remote: 'Remote of published runs (default: results.remote, else origin)' } })
    .example('agentv-results gate @baseline .agentv/results/2026-11-24T07-27-55-252Z --format markdown >> "$GITHUB_STEP_SUMMARY"')
    .example('agentv-results gate @baseline "$RUN_ID" --update-baseline --missing-baseline pass')
    .action((baseline: string, candidate: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const format = outputFormat(flags);
        const markdownOut = stringFlag('markdown-out', flags.markdownOut);
        try {
          return await gateCommand(baseline, candidate, flags, format, markdownOut);
        } catch (err) {
          // A gate that could not decide says so where the team reads it (exit 2, 3 or 70 follows).
          const message = err instanceof Error ? err.message : String(err);
          const code = exitCodeFor(err);
          const md = gateErrorMarkdown(message, code, !(err instanceof AgentvResultsError) && code === EXIT.bug);
          if (format === 'markdown') process.stdout.write(md);
          if (markdownOut !== undefined) await writeMarkdownOut(markdownOut, md);
          throw err;
        }
      }),
    );
}

/** `--markdown-out`: written whole by the output-target rule (a partial comment is never left), relative to the working directory. */
async function writeMarkdownOut(file: string, text: string): Promise<void> {
  await writeOutputFile(file, [text], { named: true, label: '--markdown-out' });
}

async function gateCommand(
  baseline: string,
  candidate: string,
  flags: Record<string, unknown>,
  format: ReturnType<typeof outputFormat>,
  markdownOut: string | undefined,
): Promise<number> {
  let progress: ReturnType<typeof progressReporter> | null = null;
  const printVerdict = async (v: GateVerdict): Promise<void> => {
    const markdown = () =>
      v.kind === 'no-baseline'
        ? gateNoBaselineMarkdown(baseline, runLink(v.candidate), { nowBaseline: v.becomesBaseline })
        : gateMarkdown(v.report, { baseline: runLink(v.baseline), candidate: runLink(v.candidate) });
    if (markdownOut !== undefined) await writeMarkdownOut(markdownOut, markdown());
    if (v.kind === 'no-baseline') {
      if (format === 'json') printJson({ passed: true, baseline: null, note: v.note });
      else if (format === 'markdown') process.stdout.write(markdown());
      else process.stdout.write(yellow(v.note) + '\n');
      return;
    }
    const { report, baseline: b, candidate: c } = v;
    for (const w of v.warnings) process.stderr.write(`warning: ${w}\n`);
    if (format === 'json') printJson(report);
    else if (format === 'markdown') process.stdout.write(markdown());
    else printGate(report, b.runId ?? b.name, c.runId ?? c.name);
  };
  const result = await gateCheck({
    ...optionsFromFlags(GateCheckOptionsSchema, flags, { baseline, candidate }),
    onVerdict: printVerdict,
    onStep: (step) => {
      progress = progressReporter(step, { quiet: format === 'json' });
    },
    onWarning: (text) => process.stderr.write(dim(`warning: ${text}\n`)),
  }).finally(() => progress?.done());
  if (!result.passed) return EXIT.check;
  const moved = result.moved;
  if (!moved) return EXIT.ok;
  const out = format === 'text' ? process.stdout : process.stderr;
  out.write(
    `baseline -> ${moved.runId}${moved.removedFrom.length > 0 ? ` (was ${moved.removedFrom.join(', ')})` : ''}\n${moved.last.push ? pushLines(moved.last.push).join('\n') + '\n' : ''}`,
  );
  return moved.last.push ? pushExitCode(moved.last.push) : EXIT.ok;
}
