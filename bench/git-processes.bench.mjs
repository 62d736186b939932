#!/usr/bin/env node
/**
 * Git processes a command starts, per verb, and its wall time: the quick start's project (one run
 * published and pushed to a local bare remote) read by `list`, `status`, `summary <run>`, `publish
 * --no-push` of the published run again, and `sync` with nothing to do, each through the built CLI
 * as a process with GIT_TRACE2_EVENT (every git process it starts, counted from their start events).
 *
 *   node bench/git-processes.bench.mjs [--before <tree>] [--runs N]
 *
 * --before: another checkout of this project, built (its dist/), measured on the same project in the
 * same run; the table then gives after/before ratios. Prints a Markdown table.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const before = opt('--before') ? resolve(opt('--before')) : null;
const runs = Number(opt('--runs') ?? 5);

// The quick start seeds the project (its own output names it).
const seeded = spawnSync(process.execPath, [join(root, 'examples/quickstart.mjs')], { encoding: 'utf8' });
if (seeded.status !== 0) throw new Error(`quickstart failed: ${seeded.stderr}`);
const project = /cd (\S+\/project) && git log/.exec(seeded.stdout)?.[1];
if (!project) throw new Error('quickstart did not name its project');
const runDir = readdirSync(join(project, '.agentv/results'))[0];

const verbs = [
  ['list', ['list']],
  ['status', ['status']],
  ['summary', ['summary', runDir]],
  ['publish --no-push', ['publish', '--no-push', join('.agentv/results', runDir)]],
  ['sync (nothing to do)', ['sync']],
];

function measure(tree, argv) {
  const counts = [];
  const walls = [];
  for (let i = 0; i < runs; i++) {
    const trace = mkdtempSync(join(tmpdir(), 'agentv-gittrace-'));
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [join(tree, 'dist/cli/main.js'), ...argv], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, GIT_TRACE2_EVENT: trace },
    });
    walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
    let n = 0;
    for (const f of readdirSync(trace)) for (const line of readFileSync(join(trace, f), 'utf8').split('\n')) if (line.includes('"event":"start"')) n++;
    rmSync(trace, { recursive: true, force: true });
    counts.push(n);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { gits: median(counts), wall: median(walls) };
}

const rows = [];
for (const [name, argv] of verbs) {
  const after = measure(root, argv);
  const was = before ? measure(before, argv) : null;
  rows.push({ name, after, was });
}
const fmt = (ms) => `${ms.toFixed(0)} ms`;
console.log(`git processes and wall time per command (median of ${runs}; project ${project})\n`);
console.log(before ? '| command | gits before | gits after | ratio | wall before | wall after | ratio |' : '| command | gits | wall |');
console.log(before ? '|---|---:|---:|---:|---:|---:|---:|' : '|---|---:|---:|');
for (const { name, after, was } of rows) {
  if (was)
    console.log(
      `| ${name} | ${was.gits} | ${after.gits} | ${(after.gits / was.gits).toFixed(2)}x | ${fmt(was.wall)} | ${fmt(after.wall)} | ${(after.wall / was.wall).toFixed(2)}x |`,
    );
  else console.log(`| ${name} | ${after.gits} | ${fmt(after.wall)} |`);
}
rmSync(dirname(project), { recursive: true, force: true });
