import type { Cli } from './program.js';
import { fmtBytes } from '../report/format.js';
import { site, SiteOptionsSchema } from '../site/index.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';
import { printJson, yellow } from './format.js';
import { progressReporter } from './progress.js';

export function registerSite(cli: Cli): void {
  const cmd = cli.command(
    'site',
    'Write the Dashboard’s read-only views of the results branch as a static site (runs, a run and its report, tests, compare, trends) for GitHub Pages, GitLab Pages or a bucket; a rebuild rewrites only what changed',
  );
  schemaFlagsInOrder(cmd, SiteOptionsSchema, ['out', 'trendLast', 'detailLast', 'full', 'fetch', ...TARGET_FLAGS_LAST], {
    remote: 'Remote (default: results.remote, else origin)',
    cwd: 'Working directory (the repository is found from here)',
  })
    .option(
      '--json',
      'Machine-readable output: { out, runs, runs_built, runs_kept, runs_detailed, files_written, files_unchanged, files_removed, bytes, budget: { site_limit, file_limit, largest_file, over }, warnings }',
    )
    .example('agentv-results site --out public')
    .example('agentv-results site --fetch --out public --json')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const options = optionsFromFlags(SiteOptionsSchema, flags);
        if (options.out === undefined) throw new UsageError('site needs --out <dir>: the directory to write the site into');
        const progress = progressReporter('building the site', { quiet: Boolean(flags.json), unit: 'runs' });
        const result = await site({ ...options, onProgress: progress.update }).finally(progress.done);
        for (const w of result.warnings) process.stderr.write(yellow(`warning: ${w}\n`));
        if (flags.json) {
          printJson(result);
          return;
        }
        process.stdout.write(
          `Wrote the site of ${result.runs} run(s) of ${result.branch} to ${result.out}: ${result.filesWritten} file(s) written, ${result.filesUnchanged} unchanged, ${result.filesRemoved} removed (${fmtBytes(result.bytes)}; ${result.runsBuilt} run(s) read, ${result.runsKept} kept)\n` +
            `Size: ${fmtBytes(result.bytes)} of GitHub Pages' ${fmtBytes(result.budget.site_limit)} (largest file ${fmtBytes(result.budget.largest_file)} of ${fmtBytes(result.budget.file_limit)}); full detail for the newest ${result.runsDetailed} run(s)${result.budget.over ? ' — OVER the limit' : ''}\n`,
        );
      }),
    );
}
