/**
 * The command-line parser: commander underneath, with the small declarative surface every command
 * module uses (`command(spec, description).option(...).example(...).action(fn)`).
 *
 * What it guarantees, whatever the command:
 * - values stay strings as typed (`--out 2026`, `--experiment 007`); numbers are parsed where a
 *   command asks for one, with a clear error;
 * - an unknown option, a missing argument or an unknown command is a usage error (exit 2) that
 *   prints the usage line;
 * - multi-word commands (`wip list`, `drivers install`) are real subcommands with their own help;
 * - a string option given twice is kept as a list (`--target a --target b`).
 */
import { Command, CommanderError, Option } from 'commander';

/** The flags of one invocation: camelCase names, as commander (and before it cac) gives them. */
export type Flags = Record<string, unknown>;

export interface ActionContext {
  /** Every operand in order, including unknown options of a command that allows them (`tag`). */
  operands: string[];
}

type ActionFn = (...args: any[]) => unknown;

export class CommandBuilder {
  private readonly examples: string[] = [];

  constructor(
    readonly command: Command,
    private readonly argCount: number,
    private readonly cli: Cli,
  ) {}

  /** `--name`, `--name <value>` or `--no-name`; a default is shown in the help. */
  option(flags: string, description: string, config: { default?: unknown } = {}): this {
    const opt = new Option(flags, description);
    if (opt.required || opt.optional) opt.argParser(this.cli.collect(opt.attributeName()));
    if (config.default !== undefined) opt.default(config.default);
    this.command.addOption(opt);
    return this;
  }

  example(text: string): this {
    if (this.examples.length === 0) this.command.addHelpText('after', () => `\nExamples:\n${this.examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    this.examples.push(text);
    return this;
  }

  /** Tokens that look like options but are not declared ones stay operands (`tag RUN -old +new`). */
  allowUnknownOptions(): this {
    this.command.allowUnknownOption(true);
    return this;
  }

  /** `fn(arg1, …, argN, flags, context)`: declared arguments in order (a variadic one as an array). */
  action(fn: ActionFn): this {
    this.command.action(async (...received: unknown[]) => {
      const cmd = received[received.length - 1] as Command;
      const args = received.slice(0, this.argCount);
      const flags: Flags = { ...cmd.opts(), '--': this.cli.afterDoubleDash };
      await fn(...args, flags, { operands: [...cmd.args] } satisfies ActionContext);
    });
    return this;
  }
}

/** Where commander writes: our prefix on errors; help wrapped to a terminal, one line per option when piped. */
function outputFor(name: string) {
  return {
    outputError: (text: string, write: (s: string) => void) => write(`${name}: ${text.replace(/^error: /, '')}`),
    getOutHelpWidth: () => (process.stdout.isTTY ? process.stdout.columns : 10_000),
    getErrHelpWidth: () => (process.stderr.isTTY ? process.stderr.columns : 10_000),
  };
}

/**
 * `help <command> [subcommand]` is `<command> [subcommand] --help`. A name that is no command of
 * the program or of a group is kept, so it fails as an unknown command (exit 2, with a
 * suggestion); words after a command that has no subcommands are dropped, never run.
 */
function helpAsFlag(argv: string[], program: Command): string[] {
  const [node, script, first, ...words] = argv;
  if (first !== 'help' || words.length === 0) return argv;
  const path: string[] = [];
  let at = program;
  for (const w of words) {
    if (at.commands.length === 0) break;
    const next = at.commands.find((c) => c.name() === w);
    if (!next) return [node!, script!, ...path, w];
    path.push(w);
    at = next;
  }
  return [node!, script!, ...path, '--help'];
}

export class Cli {
  readonly program: Command;
  /** Words after a lone `--` (the command `exec` runs). */
  afterDoubleDash: string[] = [];
  private readonly seen = new Set<string>();

  constructor(name: string, version: string) {
    this.program = new Command(name)
      .version(version, '-v, --version', 'Print the version')
      .helpOption('-h, --help', 'Show help')
      .showSuggestionAfterError(true)
      .configureOutput(outputFor(name));
    this.program.exitOverride();
    // Listed in the overview; `run` answers it (commander's own would drop the words after the first).
    this.program.helpCommand('help [command...]', 'Show the help of a command: help publish, help wip recover');
  }

  /**
   * `spec` is the command words then its arguments: `export <source>`, `compare <baseline> [candidate]`,
   * `combine <...runs>`, `wip recover <branch-or-run>`. A word before the last names a parent
   * command, created on first use (describe it with `group`).
   */
  command(spec: string, description: string): CommandBuilder {
    const parts = spec.trim().split(/\s+/);
    const words = parts.filter((p) => !/^[<[]/.test(p));
    const args = parts.filter((p) => /^[<[]/.test(p));
    let parent = this.program;
    for (const w of words.slice(0, -1)) parent = this.subcommand(parent, w);
    const cmd = new Command(words[words.length - 1]!).description(description);
    for (const a of args) cmd.argument(a.replace(/^([<[])\.\.\.(.+)([>\]])$/, '$1$2...$3'));
    cmd.exitOverride();
    cmd.helpOption('-h, --help', 'Show help');
    const usage = [this.program.name(), ...words, '[options]', ...args.map((a) => a.replace(/^([<[])\.\.\.(.+)([>\]])$/, '$1$2...$3'))].join(' ');
    cmd.showHelpAfterError(`usage: ${usage}\n(run \`${this.program.name()} ${words.join(' ')} --help\` for the options)`);
    cmd.configureOutput(outputFor(this.program.name()));
    parent.addCommand(cmd);
    return new CommandBuilder(cmd, args.length, this);
  }

  /** Describe a parent command (`wip`, `drivers`, `autoresearch`) whose subcommands are the actions. */
  group(name: string, description: string): void {
    this.subcommand(this.program, name).description(description);
  }

  /** The option parser of a value option: the first value as a string, a repeated one as a list. */
  collect(attribute: string): (value: string, previous: unknown) => unknown {
    return (value, previous) => {
      if (!this.seen.has(attribute)) {
        this.seen.add(attribute);
        return value;
      }
      return Array.isArray(previous) ? [...previous, value] : [previous, value];
    };
  }

  /**
   * Parses and runs. Resolves with the exit code of a parse failure (2) or help/version (0); a
   * command's own code is set on process.exitCode by the command.
   */
  async run(argv: string[]): Promise<number | undefined> {
    const user = argv.slice(2);
    const dd = user.indexOf('--');
    this.afterDoubleDash = dd >= 0 ? user.slice(dd + 1) : [];
    if (user.length === 0 || (user.length === 1 && user[0] === 'help')) {
      this.program.outputHelp();
      return 0;
    }
    try {
      await this.program.parseAsync(helpAsFlag(argv, this.program));
      return undefined;
    } catch (err) {
      if (err instanceof CommanderError) {
        // Help asked for, or the version: success. Anything else (an unknown option or command, a
        // required argument not given, a group named without its action) is a usage error.
        return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : 2;
      }
      throw err;
    }
  }

  private subcommand(parent: Command, name: string): Command {
    const existing = parent.commands.find((c) => c.name() === name);
    if (existing) return existing;
    const cmd = new Command(name);
    cmd.exitOverride();
    cmd.helpOption('-h, --help', 'Show help');
    cmd.configureOutput(outputFor(this.program.name()));
    cmd.helpCommand(false);
    parent.addCommand(cmd);
    return cmd;
  }
}
