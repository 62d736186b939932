/**
 * The `agentv-results` command line: a thin shell over the library. Each command module declares
 * its arguments and flags, calls the library and prints; no logic lives here.
 *
 * This is what the shipped bundle runs (scripts/bundle-cli.mjs bundles it into
 * dist/cli/agentv-results.cjs, which the `agentv-results` binary, cli/main.ts, loads with its
 * compiled code cached); run as it is, it is the same command line, module by module.
 */
import { createRequire } from 'node:module';
import { dropWritesAfterBrokenPipe } from './broken-pipe.js';
import { registerCommands } from './commands.js';
import { exitCodeFor, failureText } from './errors.js';
import { Cli } from './program.js';

async function main(): Promise<void> {
  dropWritesAfterBrokenPipe();
  const require = createRequire(import.meta.url);
  const { version } = require('../../package.json') as { version: string };
  const cli = new Cli('agentv-results', version);
  try {
    await registerCommands(cli, process.argv);
    const code = await cli.run(process.argv);
    if (code !== undefined) process.exitCode = code;
  } catch (err) {
    // Commands report their own failures (runCommand); what reaches here escaped them.
    process.stderr.write(failureText(err));
    if (process.env.AGENTV_RESULTS_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    process.exitCode = exitCodeFor(err);
  }
}

void main();
