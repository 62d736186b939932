import type { Cli } from './program.js';
import { SCHEMAS, jsonSchema } from '../model/json-schema.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { printDocument, printJson, table } from './format.js';

export function registerSchema(cli: Cli): void {
  cli
    .command('schema [name]', 'Print the JSON Schema of an artifact (no name: list them)')
    .option('--json', 'List as JSON')
    .action((name: string | undefined, flags: Record<string, unknown>) =>
      runCommand(async () => {
        if (!name) {
          if (flags.json) printJson(Object.entries(SCHEMAS).map(([n, s]) => ({ name: n, file: s.file, description: s.description })));
          else
            process.stdout.write(
              table(
                ['Name', 'File', 'What'],
                Object.entries(SCHEMAS).map(([n, s]) => [n, s.file, s.description]),
              ) + '\n',
            );
          return;
        }
        if (!SCHEMAS[name]) throw new UsageError(`unknown schema ${JSON.stringify(name)} — run \`agentv-results schema\` to list them`);
        printDocument(jsonSchema(name));
      }),
    );
}
