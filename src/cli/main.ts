#!/usr/bin/env node
/**
 * The `agentv-results` command line: a thin shell over the library. Each command module parses
 * its flags, calls the library and prints; no logic lives here.
 */
import { cac } from 'cac';
import { createRequire } from 'node:module';
import { registerCommands } from './commands.js';
import { dropWritesAfterBrokenPipe } from './broken-pipe.js';

dropWritesAfterBrokenPipe();

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

const cli = cac('agentv-results');
registerCommands(cli);
cli.help();
cli.version(version);

try {
  cli.parse(process.argv, { run: false });
  if (!cli.matchedCommand) {
    if (cli.args.length > 0) {
      process.stderr.write(`agentv-results: unknown command ${JSON.stringify(cli.args[0])} — run \`agentv-results --help\`\n`);
      process.exitCode = 2;
    } else if (!cli.options.help && !cli.options.version) {
      cli.outputHelp();
    }
  } else {
    await cli.runMatchedCommand();
  }
} catch (err) {
  // cac throws CACError for unknown options and missing arguments: those are usage errors.
  process.stderr.write(`agentv-results: ${(err as Error).message}\n`);
  process.exitCode = 2;
}
