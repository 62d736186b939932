import type { CAC } from 'cac';
import { compareRuns, type CompareReport } from '../results/compare.js';
import { EXIT, numberFlag, runCommand } from './errors.js';
import { bold, green, printJson, red, table } from './format.js';
import { stringFlag, stringFlags } from './flags.js';

const signed = (n: number, digits = 3) => (n > 0 ? '+' : '') + n.toFixed(digits);
const outcomeText = (o: string) => (o === 'win' ? green('win') : o === 'loss' ? red('loss') : 'tie');
const listFlag = (name: string, parsed: unknown) => {
  const values = stringFlags(name, parsed);
  return values.length > 0 ? values : undefined;
};

function printReport(r: CompareReport): void {
  const byTarget = r.match_by === 'test_id+target';
  const headers = ['Test', ...(byTarget ? ['Target'] : []), 'Baseline', 'Candidate', 'Delta', 'Outcome'];
  const rows = r.tests.map((t) => [t.test_id, ...(byTarget ? [t.target ?? ''] : []), t.baseline.toFixed(3), t.candidate.toFixed(3), signed(t.delta), outcomeText(t.outcome)]);
  const side = (s: CompareReport['baseline']) => `${s.path} (${s.targets.join(', ')})`;
  process.stdout.write(`baseline:  ${side(r.baseline)}\ncandidate: ${side(r.candidate)}\nmatched by ${r.match_by}, tie band |delta| <= ${r.threshold}\n\n`);
  process.stdout.write(table(headers, rows) + '\n');
  const name = (u: { test_id: string; target?: string }) => (u.target ? `${u.test_id} [${u.target}]` : u.test_id);
  if (r.unmatched.baseline_only.length > 0) process.stdout.write(`\nonly in baseline:  ${r.unmatched.baseline_only.map(name).join(', ')}\n`);
  if (r.unmatched.candidate_only.length > 0) process.stdout.write(`${r.unmatched.baseline_only.length > 0 ? '' : '\n'}only in candidate: ${r.unmatched.candidate_only.map(name).join(', ')}\n`);
  const s = r.summary;
  const line = `wins=${s.wins}, losses=${s.losses}, ties=${s.ties}, mean_delta=${signed(s.mean_delta, 4)} (${r.matched} matched)`;
  process.stdout.write('\n' + bold(s.mean_delta < 0 ? red(line) : line) + '\n');
  if (r.decision) {
    const d = r.decision;
    process.stdout.write(`\nDecision: ${bold(d.decision === 'keep' ? green('KEEP') : red('DISCARD'))}\n  Rationale: ${d.rationale}\n`);
    if (d.artifacts) process.stdout.write(`  Artifacts: baseline ${d.artifacts.baseline.size} ${d.artifacts.baseline.unit}, candidate ${d.artifacts.candidate.size} ${d.artifacts.candidate.unit}\n`);
  }
}

export function registerCompare(cli: CAC): void {
  cli
    .command('compare <baseline> <candidate>', 'Compare two runs (run directories, index.jsonl or results .jsonl): per-test score delta (repeated attempts: mean score), wins/losses/ties, mean_delta; exit 1 when the candidate regresses (mean_delta < 0)')
    .option('--threshold <delta>', 'Tie band: |delta| <= threshold is a tie. Default 0: a win is any higher score, a loss any lower one, a tie no change; 0.1 ignores small noise. Deltas and mean_delta are rounded to 9 decimals', { default: 0 })
    .option('--target <name>', 'Compare only this target on both sides (repeatable)')
    .option('--baseline-target <name>', 'Narrow the baseline to this target (repeatable)')
    .option('--candidate-target <name>', 'Narrow the candidate to this target (repeatable)')
    .option('--decide', 'Print the keep/discard decision (wins > losses -> keep; mean_delta == 0 and the candidate artifact is simpler -> keep; else discard)')
    .option('--baseline-artifact <path>', 'Baseline prompt/skill for the simplicity rule (file: line count; directory: total bytes)')
    .option('--candidate-artifact <path>', 'Candidate prompt/skill for the simplicity rule')
    .option('--dir <dir>', 'Working directory used to resolve relative paths')
    .option('--json', 'Machine-readable output: { summary: {wins, losses, ties, mean_delta}, matched, unmatched, tests, decision? }')
    .example('agentv-results compare baseline/index.jsonl candidate/index.jsonl --json')
    .example('agentv-results compare base.jsonl cand.jsonl --decide --baseline-artifact old/SKILL.md --candidate-artifact SKILL.md')
    .action((baseline: string, candidate: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const report = await compareRuns({
          baseline,
          candidate,
          cwd: (flags.dir as string | undefined) ?? process.cwd(),
          threshold: numberFlag('threshold', flags.threshold, 0),
          targets: listFlag('target', flags.target),
          baselineTargets: listFlag('baseline-target', flags.baselineTarget),
          candidateTargets: listFlag('candidate-target', flags.candidateTarget),
          decide: Boolean(flags.decide),
          baselineArtifact: stringFlag('baseline-artifact', flags.baselineArtifact),
          candidateArtifact: stringFlag('candidate-artifact', flags.candidateArtifact),
        });
        for (const w of report.warnings) process.stderr.write(`warning: ${w}\n`);
        if (flags.json) {
          const { regression: _regression, warnings: _warnings, ...out } = report;
          printJson(out);
        } else {
          printReport(report);
        }
        return report.regression ? EXIT.check : EXIT.ok;
      }),
    );
}
