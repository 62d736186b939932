import type { Cli, CommandBuilder } from './program.js';
import { recordCycle, renderTrajectory } from '../autoresearch/record.js';
import { DEFAULT_COMPARE_THRESHOLD } from '../compare/compare.js';
import { EXIT, numberFlag, runCommand, UsageError } from './errors.js';
import { stringFlag } from './flags.js';
import { bold, green, printJson, red, yellow } from './format.js';

export function registerAutoresearch(cli: Cli): void {
  cli.group('autoresearch', 'Autoresearch loop support (the agentv-bench skill): record a cycle, render its trajectory');
  const common = (b: CommandBuilder) =>
    b
      .option('--experiment <name>', 'Experiment name, e.g. autoresearch-pdf-skill (required)')
      .option('--experiment-dir <dir>', 'Experiment directory holding _autoresearch/ (default: .agentv/results/runs/<experiment>)')
      .option('--mutation <text>', 'record: one-line description of what changed this cycle')
      .option('--baseline <run>', "record: compare with this run instead of the most recent kept cycle's run")
      .option('--threshold <delta>', `record: compare's win/loss threshold (default ${DEFAULT_COMPARE_THRESHOLD}, as agentv compare)`)
      .option('--baseline-artifact <path>', 'record: the kept artifact (file: lines, folder: bytes) for the "simpler at equal score" rule')
      .option('--candidate-artifact <path>', "record: this cycle's artifact")
      .option('--final', 'Write trajectory.html without auto-refresh: the loop is over')
      .option('--dir <dir>', 'Working directory (paths are resolved from here)')
      .option('--json', 'Machine-readable output');
  common(
    cli.command(
      'autoresearch record <run>',
      'Append a cycle to _autoresearch/iterations.jsonl with its keep/drop decision from compare, and rewrite trajectory.html',
    ),
  )
    .example(
      'agentv-results autoresearch record .agentv/results/2026-04-15T10-30-00-000Z --experiment autoresearch-pdf-skill --mutation "added a null-check rule"',
    )
    .action((run: string, flags: Record<string, unknown>) => autoresearchAction('record', run, flags));
  common(cli.command('autoresearch trajectory', 'Rewrite trajectory.html from the iterations (--final stops its auto-refresh)'))
    .example('agentv-results autoresearch trajectory --experiment autoresearch-pdf-skill --final')
    .action((flags: Record<string, unknown>) => autoresearchAction('trajectory', undefined, flags));
}

function autoresearchAction(action: 'record' | 'trajectory', run: string | undefined, flags: Record<string, unknown>): Promise<void> {
  return runCommand(async () => {
    const experiment = stringFlag('experiment', flags.experiment);
    if (!experiment) throw new UsageError('--experiment <name> is required (e.g. autoresearch-<artifact>)');
    const common = {
      experiment,
      experimentDir: stringFlag('experiment-dir', flags.experimentDir),
      cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
      final: Boolean(flags.final),
    };
    if (action === 'record') {
      if (!run) throw new UsageError('autoresearch record <run>: pass the run directory (or index.jsonl) of the cycle just evaluated');
      const r = await recordCycle({
        ...common,
        run,
        mutation: stringFlag('mutation', flags.mutation),
        baseline: stringFlag('baseline', flags.baseline),
        threshold: numberFlag('threshold', flags.threshold, DEFAULT_COMPARE_THRESHOLD),
        baselineArtifact: stringFlag('baseline-artifact', flags.baselineArtifact),
        candidateArtifact: stringFlag('candidate-artifact', flags.candidateArtifact),
      });
      for (const w of r.warnings) process.stderr.write(yellow(`warning: ${w}`) + '\n');
      if (flags.json) {
        printJson({ ...r.iteration, iterations_path: r.paths.iterations, trajectory_path: r.paths.trajectory });
        return EXIT.ok;
      }
      const it = r.iteration;
      const c = it.compare ? `  wins=${it.compare.wins}, losses=${it.compare.losses}, ties=${it.compare.ties}, mean_delta=${it.compare.mean_delta}\n` : '';
      process.stdout.write(
        `Cycle ${it.cycle}: ${bold(it.decision === 'keep' ? green('KEEP') : red('DROP'))} (score ${it.score.toFixed(3)}, cost $${it.cost_usd})\n${c}  Rationale: ${it.rationale}\n  Logged to ${r.paths.iterations}\n  Chart: ${r.paths.trajectory}\n`,
      );
      return EXIT.ok;
    }
    if (action === 'trajectory') {
      if (run) throw new UsageError('autoresearch trajectory takes no run argument');
      const r = await renderTrajectory(common);
      for (const w of r.warnings) process.stderr.write(yellow(`warning: ${w}`) + '\n');
      if (flags.json) printJson({ trajectory_path: r.paths.trajectory, cycles: r.iterations.length, final: common.final });
      else process.stdout.write(`${r.paths.trajectory}: ${r.iterations.length} cycle(s)${common.final ? ', final (no auto-refresh)' : ', live'}\n`);
      return EXIT.ok;
    }
    throw new UsageError(`unknown autoresearch action ${JSON.stringify(action)} — use record or trajectory`);
  });
}
