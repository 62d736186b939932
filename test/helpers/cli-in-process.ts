/**
 * The CLI run inside the test process: the built parser, command table and commands (dist/cli,
 * from `npm run build`; src/cli under AGENTV_TEST_CLI=source, the fast tier's setting) called exactly as dist/cli/main.js calls them, with the process state a
 * command can see or change swapped in and restored around the call: stdout and stderr (captured,
 * not terminals), stdin (not a terminal), the working directory, the environment and the exit code.
 *
 * Why: a suite that starts a fresh node for every command spends most of its CPU starting node
 * and loading modules (BENCHMARKS.md, "Test tiers"). Tests whose subject is a command's behaviour
 * run it here; tests whose subject is the process itself (the bundle, signals, kill -9, a broken
 * pipe, stdin, commands racing each other) start the real binary with `spawnCli`, and
 * AGENTV_TEST_CLI=process runs every `runCli` of the suite as a real process.
 *
 * Two calls may not overlap: they would share one working directory, one environment and one
 * stdout. Concurrent commands are a process-boundary subject; an overlap fails the test loudly.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './fixtures.js';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliModules {
  Cli: new (name: string, version: string) => { run(argv: string[]): Promise<number | undefined> };
  registerCommands: (cli: unknown, argv: readonly string[]) => Promise<void>;
  version: string;
}

let modules: Promise<CliModules> | undefined;

function load(): Promise<CliModules> {
  modules ??= (async () => {
    // The fast tier (vitest.fast.config.ts) runs the commands from source, so it needs no build
    // and never tests stale code; every other run uses the build, as a user does.
    const fromSource = process.env.AGENTV_TEST_CLI === 'source';
    const dir = join(REPO_ROOT, fromSource ? 'src' : 'dist', 'cli');
    const ext = fromSource ? '.ts' : '.js';
    const program = await import(/* @vite-ignore */ pathToFileURL(join(dir, `program${ext}`)).href);
    const commands = await import(/* @vite-ignore */ pathToFileURL(join(dir, `commands${ext}`)).href);
    const { version } = createRequire(import.meta.url)(join(REPO_ROOT, 'package.json')) as { version: string };
    return { Cli: program.Cli, registerCommands: commands.registerCommands, version };
  })();
  return modules;
}

let running: string | null = null;

type Write = typeof process.stdout.write;

/** Replaces a stream's write with one that collects; returns the restore function. */
function capture(stream: NodeJS.WriteStream, sink: string[]): () => void {
  const write = stream.write;
  const isTTY = Object.getOwnPropertyDescriptor(stream, 'isTTY');
  stream.write = ((chunk: unknown, encodingOrCb?: unknown, cb?: unknown) => {
    sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  }) as Write;
  // A spawned command's stdout and stderr are pipes: no colour, no progress line.
  Object.defineProperty(stream, 'isTTY', { value: false, configurable: true, writable: true });
  return () => {
    stream.write = write;
    if (isTTY) Object.defineProperty(stream, 'isTTY', isTTY);
    else delete (stream as { isTTY?: boolean }).isTTY;
  };
}

/** Sets the environment a spawned command would get (`undefined` removes a variable); returns the restore function. */
function useEnv(overrides: Record<string, string | undefined>): () => void {
  const saved = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
}

export async function runCliInProcess(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<InProcessResult> {
  if (running !== null) {
    throw new Error(
      `runCli(${JSON.stringify(args)}) started while runCli(${running}) was still running: in-process commands share the ` +
        'working directory, environment and stdout. Start concurrent commands as processes with spawnCli.',
    );
  }
  running = JSON.stringify(args);
  try {
    return await runGuarded(args, opts);
  } finally {
    running = null;
  }
}

async function runGuarded(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> }): Promise<InProcessResult> {
  const { Cli, registerCommands, version } = await load().catch((err: Error) => {
    modules = undefined;
    throw new Error(`the built CLI could not be loaded from dist/cli (run \`npm run build\`): ${err.message}`);
  });
  const argv = [process.execPath, join(REPO_ROOT, 'dist', 'cli', 'main.js'), ...args];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const cwd = process.cwd();
  const exitCode = process.exitCode;
  const stdinTTY = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY');
  const restores: (() => void)[] = [];
  let code: number;
  try {
    restores.push(useEnv({ NO_COLOR: '1', ...opts.env }));
    if (opts.cwd !== undefined) process.chdir(opts.cwd);
    Object.defineProperty(process.stdin, 'isTTY', { value: false, configurable: true, writable: true });
    restores.push(capture(process.stdout, stdout), capture(process.stderr, stderr));
    process.exitCode = undefined;
    try {
      const cli = new Cli('agentv-results', version);
      await registerCommands(cli, argv);
      const parsed = await cli.run(argv);
      code = parsed ?? Number(process.exitCode ?? 0);
    } catch (err) {
      // What node does with a rejection nothing caught at the top level of main.js.
      stderr.push(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      code = 1;
    }
  } finally {
    for (const restore of restores.reverse()) restore();
    if (stdinTTY) Object.defineProperty(process.stdin, 'isTTY', stdinTTY);
    else delete (process.stdin as { isTTY?: boolean }).isTTY;
    process.chdir(cwd);
    process.exitCode = exitCode;
  }
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}
