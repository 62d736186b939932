import type { ActionContext, Cli } from './program.js';
import { editTags, EditTagsOptionsSchema, readTags, ReadTagsOptionsSchema } from '../overlay-write/write.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { dim, printJson } from './format.js';
import { progressReporter } from './progress.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST } from './schema-flags.js';
import { publishedIdOf, RUN_NAME_HELP } from './run-names.js';
import { pushExitCode, pushLines } from './sync.js';

/**
 * The edits of `tag <run_id> +add -remove …`: `-name` looks like a short option to any parser, so
 * the command lets undeclared options through as operands (in the order typed) and reads them
 * here. A `--long` word that is not one of its options is still refused, as everywhere.
 */
/** Tag reads its edits itself, so its usage errors end with the usage line the parser prints for the others. */
function usageError(what: string): UsageError {
  return new UsageError(`tag: ${what}\nusage: agentv-results tag [options] <run_id> [edits...]\n(run \`agentv-results tag --help\` for the options)`);
}

export function parseTagEdits(operands: string[]): { runId: string | null; add: string[]; remove: string[] } {
  const add: string[] = [];
  const remove: string[] = [];
  let runId: string | null = null;
  for (const a of operands) {
    if (a.startsWith('--')) throw usageError(`unknown option ${a}`);
    if (a.startsWith('+') && a.length > 1) add.push(a.slice(1));
    else if (a.startsWith('-') && a.length > 1) remove.push(a.slice(1));
    else if (runId === null) runId = a;
    else throw usageError(`${JSON.stringify(a)} is neither +name (add) nor -name (remove)`);
  }
  return { runId, add, remove };
}

export function registerTag(cli: Cli): void {
  const cmd = cli
    .command(
      'tag <run_id> [edits...]',
      `Add (+name) or remove (-name) tags of a published run on the results branch, then push; no edits: show the tags. The run is ${RUN_NAME_HELP}`,
    )
    .allowUnknownOptions();
  schemaFlagsInOrder(cmd, EditTagsOptionsSchema, ['expectRevision', 'push']);
  schemaFlagsInOrder(cmd, ReadTagsOptionsSchema, ['fetch']);
  schemaFlagsInOrder(cmd, EditTagsOptionsSchema, TARGET_FLAGS_LAST, {
    remote: 'Remote (default: results.remote, else origin)',
    configFile: 'Configuration file',
    cwd: 'Working directory (the repository resolves from here)',
  })
    .option('--json', 'Machine-readable output')
    .example('agentv-results tag nightly/2026-03-14T10-32-00-000Z +baseline +release-2.1 -candidate')
    .action((_run: string, _edits: string[], flags: Record<string, unknown>, ctx: ActionContext) =>
      runCommand(async () => {
        const { runId, add, remove } = parseTagEdits(ctx.operands);
        if (runId === null) throw usageError('missing <run_id>');
        const id = await publishedIdOf(runId, flags);
        if (add.length === 0 && remove.length === 0) {
          const doc = await readTags(optionsFromFlags(ReadTagsOptionsSchema, flags, { runId: id }));
          if (flags.json) printJson(doc);
          else process.stdout.write(`${doc.tags.length > 0 ? doc.tags.join(' ') : '(no tags)'}\n${dim(`tag_revision ${doc.tag_revision}`)}\n`);
          return;
        }
        const options = optionsFromFlags(EditTagsOptionsSchema, flags, { runId: id, add, remove });
        const progress = progressReporter('tagging', { quiet: Boolean(flags.json) });
        const r = await editTags(options).finally(progress.done);
        if (flags.json) printJson(r);
        else {
          process.stdout.write(
            `${runId}: ${r.document.tags.length > 0 ? r.document.tags.join(' ') : '(no tags)'}${r.changed ? '' : ' (unchanged)'}\n${dim(`tag_revision ${r.document.tag_revision}`)}\n`,
          );
          if (r.push) for (const l of pushLines(r.push)) process.stdout.write(l + '\n');
        }
        return r.push ? pushExitCode(r.push) : 0;
      }),
    );
}
