/**
 * `serve`: the team Dashboard and its API (remote status/sync, runs, compare, trends, tag and
 * feedback edits) on 127.0.0.1. The server itself is src/serve; this file reads flags and prints.
 */
import type { Cli } from './program.js';
import { startServer, type RunningServer, type ServeOptions } from '../serve/index.js';
import { numberFlag, runCommand, UsageError } from './errors.js';
import { configFlags, PROJECT_OPTION_HELP, stringFlag, stringFlags } from './flags.js';
import { dim, yellow } from './format.js';

export const SERVE_OPTIONS: [string, string][] = [
  ['--port <n>', 'Port (default 4318; 0 picks a free one)'],
  ['--host <addr>', 'Address to bind (default 127.0.0.1; anything else needs --allow-remote)'],
  ['--allow-remote', 'Allow binding a non-loopback address (the API can sync and edit the results branch: put it behind something that authenticates)'],
  ['--allow-host <name>', 'Also answer to this Host name (repeatable; e.g. a reverse proxy). Others are refused (DNS rebinding protection)'],
  ['--read-only', 'Refuse sync, tag and feedback edits'],
];

/** Start the server from parsed flags and print where it listens (shared with `daemon --http`). */
export async function startServeFromFlags(
  flags: Record<string, unknown>,
  base: Pick<ServeOptions, 'cwd' | 'remote' | 'configFile' | 'project'>,
  defaultPort = 4318,
): Promise<RunningServer> {
  const port = flags.port === undefined ? defaultPort : numberFlag('port', flags.port, defaultPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${String(flags.port)}: expected 0-65535`);
  let server: RunningServer;
  try {
    server = await startServer({
      ...base,
      host: stringFlag('host', flags.host) ?? '127.0.0.1',
      port,
      allowRemote: Boolean(flags.allowRemote),
      allowHosts: stringFlags('allow-host', flags.allowHost),
      readOnly: Boolean(flags.readOnly),
    });
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
  for (const [flag, help] of SERVE_OPTIONS) cmd.option(flag, help);
  cmd
    .option('--remote <name>', 'Remote (default: results.remote, else origin)')
    .option('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')
    .option('--project <id>', PROJECT_OPTION_HELP)
    .option('--dir <dir>', 'Working directory (the repository is found from here)')
    .example('agentv-results serve            # then open http://127.0.0.1:4318/')
    .example('agentv-results serve --port 0 --read-only')
    .action((flags: Record<string, unknown>) =>
      runCommand(async () => {
        const server = await startServeFromFlags(flags, {
          cwd: stringFlag('dir', flags.dir) ?? process.cwd(),
          remote: stringFlag('remote', flags.remote),
          ...configFlags(flags),
        });
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
