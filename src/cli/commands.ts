import type { Cli } from './program.js';

type Register = (cli: Cli) => void;

/**
 * Every command the binary offers, in the order `--help` lists them; one module per command, named
 * by the command's first word. Each module is loaded only when needed: a command's start-up pays
 * for its own code, not for the report, the Dashboard and the daemon (the shipped bundle is split
 * at these imports; BENCHMARKS.md, "CLI start-up").
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  export: () => import('./export.js').then((m) => m.registerExport),
  publish: () => import('./publish.js').then((m) => m.registerPublish),
  report: () => import('./report.js').then((m) => m.registerReport),
  schema: () => import('./schema.js').then((m) => m.registerSchema),
  summary: () => import('./summary.js').then((m) => m.registerSummary),
  failures: () => import('./failures.js').then((m) => m.registerFailures),
  show: () => import('./show.js').then((m) => m.registerShow),
  validate: () => import('./validate.js').then((m) => m.registerValidate),
  combine: () => import('./combine.js').then((m) => m.registerCombine),
  delete: () => import('./delete.js').then((m) => m.registerDelete),
  compare: () => import('./compare.js').then((m) => m.registerCompare),
  gate: () => import('./gate.js').then((m) => m.registerGate),
  trend: () => import('./trend.js').then((m) => m.registerTrend),
  flaky: () => import('./flaky.js').then((m) => m.registerFlaky),
  autoresearch: () => import('./autoresearch.js').then((m) => m.registerAutoresearch),
  list: () => import('./list.js').then((m) => m.registerList),
  status: () => import('./status.js').then((m) => m.registerStatus),
  pull: () => import('./pull.js').then((m) => m.registerPull),
  sync: () => import('./sync.js').then((m) => m.registerSync),
  tag: () => import('./tag.js').then((m) => m.registerTag),
  feedback: () => import('./feedback.js').then((m) => m.registerFeedback),
  drivers: () => import('./drivers.js').then((m) => m.registerDrivers),
  'merge-driver': () => import('./merge-driver.js').then((m) => m.registerMergeDriver),
  wip: () => import('./wip.js').then((m) => m.registerWip),
  exec: () => import('./exec.js').then((m) => m.registerExec),
  daemon: () => import('./daemon.js').then((m) => m.registerDaemon),
  serve: () => import('./serve.js').then((m) => m.registerServe),
  site: () => import('./site.js').then((m) => m.registerSite),
  archive: () => import('./archive.js').then((m) => m.registerArchive),
  expire: () => import('./expire.js').then((m) => m.registerExpire),
  storage: () => import('./storage.js').then((m) => m.registerStorage),
};

/** The command names, in help order. */
const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

/**
 * Registers what this invocation can reach: only the named command when the first argument names
 * one (`publish …`, `merge-driver …`), nothing for `--version`, and every command otherwise (the
 * overview help, an unknown command's "did you mean", no arguments at all).
 */
export async function registerCommands(cli: Cli, argv: readonly string[]): Promise<void> {
  // `help <command>` loads the command it asks about.
  const first = argv[2] === 'help' && argv[3] !== undefined ? argv[3] : argv[2];
  if (first === '-v' || first === '--version') return;
  const names = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : COMMAND_NAMES;
  const registers = await Promise.all(names.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(cli);
}
