import type { Cli } from './program.js';
import { fmtBytes } from '../report/format.js';
import { site } from '../site/index.js';
import { numberFlag, runCommand, UsageError } from './errors.js';
import { configFlags, PROJECT_OPTION_HELP, stringFlag } from './flags.js';
import { printJson, yellow } from './format.js';
import { progressReporter } from './progress.js';

export function registerSite(cli: Cli): void {
  cli
    .command(
      'site',
      'Write the Dashboard’s read-only views of the results branch as a static site (runs, a run and its report, tests, compare, trends) for GitHub Pages, GitLab Pages or a bucket; a rebuild rewrites only what changed',
    )
    .option('-o, --out <dir>', 'The site’s directory: new, empty, or a site built before (required)')
    .option('--trend-last <n>', 'Trend charts show the newest n runs of each series (default 50)')
    .option(
      '--detail-last <n>',
      'Full detail (tests, transcripts, report) for the newest n runs; older runs keep their summary and test table (default 200), so the site stays within GitHub Pages’ 1 GB',
    )
    .option('--full', 'Read every run again, not only new and changed ones (files are still rewritten only when their bytes differ)')
    .option('--fetch', 'Fetch the results branch from the remote first')
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository is found from here)')
    .option(
      '--json',
      'Machine-readable output: { out, runs, runs_built, runs_kept, runs_detailed, files_written, files_unchanged, files_removed, bytes, budget: { site_limit, file_limit, largest_file, over }, warnings }',
    )
    .example('agentv-results site --out public')
    .example('agentv-results site --fetch --out public --json')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const out = stringFlag('out', flags.out);
        if (out === undefined) throw new UsageError('site needs --out <dir>: the directory to write the site into');
        const progress = progressReporter('building the site', { quiet: Boolean(flags.json), unit: 'runs' });
        const result = await site({
          cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
          out,
          trendLast: flags.trendLast === undefined ? undefined : numberFlag('trend-last', flags.trendLast, 1),
          detailLast: flags.detailLast === undefined ? undefined : numberFlag('detail-last', flags.detailLast, 0),
          full: Boolean(flags.full),
          fetch: Boolean(flags.fetch),
          remote: stringFlag('remote', flags.remote),
          onProgress: progress.update,
          ...configFlags(flags),
        }).finally(progress.done);
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
