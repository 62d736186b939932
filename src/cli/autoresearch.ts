import type { Cli, CommandBuilder } from './program.js';
import { recordCycle, RecordCycleOptionsSchema, renderTrajectory, TrajectoryOptionsSchema } from '../autoresearch/record.js';
import { EXIT, runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { bold, green, printJson, red, yellow } from './format.js';

export function registerAutoresearch(cli: Cli): void {
  cli.group('autoresearch', 'Autoresearch loop support (the agentv-bench skill): record a cycle, render its trajectory');
  // Both commands take the same flags (the record-only ones say so), made from recordCycle's schema.
  const common = (b: CommandBuilder) => schemaFlags(b, RecordCycleOptionsSchema, { except: ['run'] }).option('--json', 'Machine-readable output');
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
    if (flags.experiment === undefined) throw new UsageError('--experiment <name> is required (e.g. autoresearch-<artifact>)');
    if (action === 'record') {
      if (!run) throw new UsageError('autoresearch record <run>: pass the run directory (or index.jsonl) of the cycle just evaluated');
      const r = await recordCycle(optionsFromFlags(RecordCycleOptionsSchema, flags, { run }));
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
      const r = await renderTrajectory(optionsFromFlags(TrajectoryOptionsSchema, flags));
      const { final } = r;
      for (const w of r.warnings) process.stderr.write(yellow(`warning: ${w}`) + '\n');
      if (flags.json) printJson({ trajectory_path: r.paths.trajectory, cycles: r.iterations.length, final });
      else process.stdout.write(`${r.paths.trajectory}: ${r.iterations.length} cycle(s)${final ? ', final (no auto-refresh)' : ', live'}\n`);
      return EXIT.ok;
    }
    throw new UsageError(`unknown autoresearch action ${JSON.stringify(action)} — use record or trajectory`);
  });
}
