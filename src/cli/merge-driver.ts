import type { Cli } from './program.js';
import { runMergeDriver } from '../merge/index.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';

/**
 * The entry git runs for `merge=agentv-jsonl` / `merge=agentv-json` (installed by `drivers install`):
 * `merge-driver <jsonl|json> %O %A %B %P`. Leaves the result in %A; exit 0 clean, 1 conflicted.
 */
export function registerMergeDriver(cli: Cli): void {
  cli
    .command('merge-driver <kind> <base> <ours> <theirs> [path]', '(run by git) Merge driver entry: jsonl or json, then %O %A %B %P')
    .action((kind: string, base: string, ours: string, theirs: string, path: string | undefined) =>
      runCommand(async () => {
        if (kind !== 'jsonl' && kind !== 'json') throw new UsageError(`merge-driver: kind must be jsonl or json (got ${JSON.stringify(kind)})`);
        return runMergeDriver(kind, String(base), String(ours), String(theirs), String(path ?? ours));
      }),
    );
}
