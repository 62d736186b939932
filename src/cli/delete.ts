import type { Cli } from './program.js';
import { createInterface } from 'node:readline/promises';
import { DeleteOptionsSchema, deleteRuns, planDelete, type DeleteTarget } from '../runs/delete.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { printJson } from './format.js';
import { displayPath } from './flags.js';

async function confirm(targets: DeleteTarget[], cwd: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write('This permanently deletes:\n');
    for (const t of targets) process.stderr.write(`  ${displayPath(cwd, t.dir)}  (${t.run_id ?? 'unknown run'}, ${t.rows} row${t.rows === 1 ? '' : 's'})\n`);
    const answer = await rl.question(`Delete ${targets.length === 1 ? 'this run' : `these ${targets.length} runs`}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export function registerDelete(cli: Cli): void {
  schemaFlags(
    cli
      .command('delete <...runs>', 'Delete local run workspaces (refuses anything that is not one)')
      .option('--yes', 'Do not ask for confirmation (required when stdin is not a terminal)'),
    DeleteOptionsSchema,
  )
    .option('--json', 'Machine-readable output: { deleted: [...] }')
    .example('agentv-results delete .agentv/results/my-eval/2026-03-14T10-32-00-000Z --yes')
    .action((runs: string[], flags: Record<string, unknown>) =>
      runCommand(async () => {
        // Every path is checked before anything is asked or deleted.
        const plan = await planDelete(optionsFromFlags(DeleteOptionsSchema, flags, { paths: runs }));
        const { cwd } = plan;
        if (!flags.yes) {
          if (!process.stdin.isTTY)
            throw new UsageError('refusing to delete without confirmation: stdin is not a terminal — pass --yes to delete non-interactively');
          if (!(await confirm(plan.targets, cwd))) {
            process.stderr.write('Nothing deleted.\n');
            return EXIT.check;
          }
        }
        const deleted = await deleteRuns(plan);
        if (flags.json) {
          printJson({ deleted });
          return EXIT.ok;
        }
        for (const d of deleted) process.stdout.write(`Deleted ${displayPath(cwd, d.dir)}${d.run_id ? ` (${d.run_id})` : ''}\n`);
        return EXIT.ok;
      }),
    );
}
