import type { Cli } from './program.js';
import { driversState, DriversOptionsSchema, installDrivers, uninstallDrivers } from '../merge/install.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { dim, green, printJson } from './format.js';

export function registerDrivers(cli: Cli): void {
  cli.group('drivers', "Merge drivers for people merging the results branch by hand: install, uninstall, status (this repository's local config only)");
  const actions: [string, string][] = [
    ['install', "Register our JSONL-union and JSON-union merge drivers in this repository's local config"],
    ['uninstall', 'Remove them again (the config is left as it was before install)'],
    ['status', 'Show whether they are installed and where they point'],
  ];
  for (const [action, description] of actions) {
    schemaFlags(cli.command(`drivers ${action}`, description), DriversOptionsSchema)
      .option('--json', 'Machine-readable output')
      .example(`agentv-results drivers ${action}`)
      .action((flags: Record<string, unknown>) => driversAction(action, flags));
  }
}

function driversAction(action: string, flags: Record<string, unknown>): Promise<void> {
  return runCommand(async () => {
    const where = optionsFromFlags(DriversOptionsSchema, flags);
    if (action === 'install') {
      const r = await installDrivers(where);
      if (flags.json) return printJson(r);
      process.stdout.write(green(`merge drivers installed in ${r.repo}`) + '\n');
      for (const k of r.keys) process.stdout.write(dim(`  ${k.key} = ${k.value}`) + '\n');
      process.stdout.write(
        'git merge / git pull on the results branch now merge index.jsonl, catalog/*.jsonl, tags.json and feedback.json like agentv-results does.\n',
      );
      process.stdout.write(dim("Merge buttons in a git host's web UI never run custom drivers; use `agentv-results sync --resolve` or merge locally.") + '\n');
      return;
    }
    if (action === 'uninstall') {
      const r = await uninstallDrivers(where);
      if (flags.json) return printJson(r);
      process.stdout.write(
        r.removed.length > 0 ? `removed ${r.removed.join(', ')} from ${r.repo}\n` : `no agentv-results merge drivers were installed in ${r.repo}\n`,
      );
      return;
    }
    if (action === 'status') {
      const r = await driversState(where);
      if (flags.json) return printJson(r);
      for (const k of r.keys) process.stdout.write(`${k.key}: ${k.value === null ? 'not set' : k.value === k.expected ? 'installed' : `set to ${k.value}`}\n`);
      return;
    }
    throw new UsageError(`drivers: unknown action ${JSON.stringify(action)} (install, uninstall or status)`);
  });
}
