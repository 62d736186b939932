/**
 * `serve`: the team Dashboard and its API (remote status/sync, runs, compare, trends, tag and
 * feedback edits) on 127.0.0.1. The server itself is src/serve; this file reads flags and prints.
 */
import type { Cli } from './program.js';
import { startServer, ServeOptionsSchema, type RunningServer, type ServeOptions } from '../serve/index.js';
import { runCommand } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import { dim, yellow } from './format.js';
import { optionsFromFlags, schemaFlagsInOrder, TARGET_FLAGS_LAST, type SchemaFlagChoice } from './schema-flags.js';
import type { Flags } from './program.js';

/** The fields of ServeOptionsSchema that are the `serve` command's own flags (`daemon --http` takes the same). */
export const SERVE_FLAG_FIELDS = ['port', 'host', 'allowRemote', 'allowHosts', 'readOnly'] as const;

/** The command's own port when --port is not given (the library's is 0: any free port). */
export const SERVE_DEFAULT_PORT = 4318;

/**
 * `startServer`'s options from this invocation's flags (`daemon --http`: only the serve fields,
 * its own target options given), the command's port when --port is not given.
 */
export function serveOptionsFromFlags(flags: Flags, given: Partial<ServeOptions> = {}, choice: SchemaFlagChoice = {}): ServeOptions {
  const options = optionsFromFlags(ServeOptionsSchema, flags, given, choice);
  return { ...options, port: options.port ?? SERVE_DEFAULT_PORT };
}

/** Start the server with options from `serveOptionsFromFlags` and print where it listens (shared with `daemon --http`). */
export async function startServeFromFlags(options: ServeOptions): Promise<RunningServer> {
  let server: RunningServer;
  const port = options.port;
  try {
    server = await startServer(options);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${port} is in use: pick another with --port (0 picks a free one)`);
    throw err;
  }
  if (server.exposed)
    process.stderr.write(
      yellow(
        `warning: listening on ${server.host}, beyond this machine: anyone who can reach it and gets the page can sync and edit tags/feedback with your git credentials\n`,
      ),
    );
  process.stderr.write(`Dashboard: ${server.url}/\n`);
  process.stderr.write(dim(`API: ${server.url}/api/remote/status · writes need header x-agentv-results-token: ${server.token}\n`));
  return server;
}

export function registerServe(cli: Cli): void {
  const cmd = cli.command(
    'serve',
    'The team Dashboard and API over the results branch: runs of every machine, run detail, compare, trends, tags and feedback, remote status and Sync',
  );
  schemaFlagsInOrder(cmd, ServeOptionsSchema, [...SERVE_FLAG_FIELDS, ...TARGET_FLAGS_LAST], {
    remote: 'Remote (default: results.remote, else origin)',
    cwd: 'Working directory (the repository is found from here)',
  })
    .example('agentv-results serve            # then open http://127.0.0.1:4318/')
    .example('agentv-results serve --port 0 --read-only')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const server = await startServeFromFlags(serveOptionsFromFlags(flags));
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            void server.close().then(() => {
              resolve();
              // Stop even when some read still holds the event loop (it cannot hold the process).
              setTimeout(() => process.exit(), 2_000).unref();
            });
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
        return 0;
      }),
    );
}
