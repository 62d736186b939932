import type { Cli } from './program.js';
import { validateRun, ValidateOptionsSchema, type ValidationProblem } from '../runs/validate.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { EXIT, runCommand } from './errors.js';
import { dim, green, printJson, red } from './format.js';
import { RUN_NAME_HELP, runFileShown, runNameOptions, withRunName } from './run-names.js';

export function registerValidate(cli: Cli): void {
  schemaFlags(
    runNameOptions(
      cli.command(
        'validate <run>',
        `Check that a run workspace resolves: paths exist inside the run and parse, ids are unique, summary counts agree, pointers match. The run is ${RUN_NAME_HELP}`,
      ),
    ),
    ValidateOptionsSchema,
    { except: ['run'] },
  )
    .option('--json', 'Machine-readable output: { valid, problems: [{file, line?, message}], notes }')
    .example('agentv-results validate .agentv/results/my-eval/2026-03-14T10-32-00-000Z')
    .action((run: string, flags: Record<string, unknown>) =>
      runCommand(async () => {
        const opts = optionsFromFlags(ValidateOptionsSchema, flags, { run });
        // The working directory the verb resolves from (the schema's default when --dir is not given) also places the paths shown.
        const cwd = ValidateOptionsSchema.shape.cwd.parse(opts.cwd);
        const { value: report, run: named } = await withRunName(
          run,
          flags,
          (path, shownAs) => validateRun({ ...opts, run: path, shownAs }),
          // A results file is read as the run it exports to.
          { deriveResultsFiles: true },
        );
        if (flags.json) {
          printJson(report);
          return report.valid ? EXIT.ok : EXIT.check;
        }
        // `<file>:<line>: message`, file relative to where the user stands, so editors can jump to it.
        const where = (p: ValidationProblem) => `${runFileShown(cwd, named, report.dir, p.file)}${p.line === undefined ? '' : `:${p.line}`}`;
        for (const p of report.problems) process.stdout.write(`${where(p)}: ${p.message}\n`);
        for (const n of report.notes) process.stdout.write(dim(`note: ${where(n)}: ${n.message}`) + '\n');
        const dir = runFileShown(cwd, named, report.dir, '');
        if (report.valid) {
          process.stdout.write(green(`✓ ${dir}: valid (${report.rows} row${report.rows === 1 ? '' : 's'})`) + '\n');
          return EXIT.ok;
        }
        const n = report.problems.length;
        process.stderr.write(red(`✗ ${dir}: ${n} problem${n === 1 ? '' : 's'}`) + '\n');
        return EXIT.check;
      }),
    );
}
