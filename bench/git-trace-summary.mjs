#!/usr/bin/env node
/**
 * Which git processes a run of the tests (or of one command) started, counted by subcommand: reads
 * a directory of git trace2 event files, one a process, as git writes them when GIT_TRACE2_EVENT
 * names a directory.
 *
 *   rm -rf /tmp/gt && mkdir /tmp/gt
 *   AGENTV_TEST_GIT_TRACE_DIR=/tmp/gt npx vitest run test/<file>.test.ts   # the tests' gits
 *   GIT_TRACE2_EVENT=/tmp/gt agentv-results status                         # one command's gits
 *   node bench/git-trace-summary.mjs /tmp/gt [--top 30] [--json out.json]
 *
 * Prints the number of processes, then per subcommand (with its leading options, so
 * `rev-parse --verify` and `rev-parse --absolute-git-dir` count apart) the processes and the sum of
 * their wall time, and which programs started them (the immediate parent: node, git, bash…).
 * Nothing here runs in `npm test`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const dir = args.find((a, i) => !a.startsWith('--') && !['--top', '--json'].includes(args[i - 1]));
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
if (!dir) {
  process.stderr.write('usage: node bench/git-trace-summary.mjs <trace dir> [--top N] [--json out.json]\n');
  process.exit(2);
}
const top = Number(opt('--top', '30'));

// git's global options that take a value as the next argument.
const WITH_VALUE = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace', '--exec-path']);

/** The subcommand and its leading options ("rev-parse -q --verify"), skipping global options. */
function commandOf(argv) {
  let i = 1;
  while (i < argv.length && argv[i].startsWith('-')) i += WITH_VALUE.has(argv[i]) ? 2 : 1;
  const sub = argv[i] ?? '?';
  const opts = [];
  for (let j = i + 1; j < argv.length && opts.length < 2 && argv[j].startsWith('-') && argv[j] !== '--end-of-options'; j++) opts.push(argv[j].split('=')[0]);
  return [sub, ...opts].join(' ');
}

const byCommand = new Map();
const byParent = new Map();
let processes = 0;
for (const name of readdirSync(dir)) {
  let argv = null;
  let parent = '?';
  let seconds = 0;
  for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
    if (!line) continue;
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      continue; // a process killed mid-line
    }
    if (e.event === 'start' && argv === null) argv = e.argv;
    else if (e.event === 'cmd_ancestry' && parent === '?') parent = e.ancestry?.[0] ?? '?';
    else if (e.event === 'atexit') seconds = e.t_abs;
  }
  if (!argv) continue;
  processes++;
  const key = commandOf(argv);
  const entry = byCommand.get(key) ?? { processes: 0, seconds: 0 };
  entry.processes++;
  entry.seconds += seconds;
  byCommand.set(key, entry);
  byParent.set(parent, (byParent.get(parent) ?? 0) + 1);
}

const commands = [...byCommand].sort((a, b) => b[1].processes - a[1].processes);
const parents = [...byParent].sort((a, b) => b[1] - a[1]);
process.stdout.write(`${processes} git processes\n\n processes  wall s  command\n`);
for (const [key, v] of commands.slice(0, top)) process.stdout.write(`${String(v.processes).padStart(10)} ${v.seconds.toFixed(1).padStart(7)}  ${key}\n`);
process.stdout.write(`\nstarted by: ${parents.map(([p, n]) => `${p} ${n}`).join(', ')}\n`);
const jsonOut = opt('--json', null);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ processes, commands: Object.fromEntries(commands), parents: Object.fromEntries(parents) }, null, 2));
