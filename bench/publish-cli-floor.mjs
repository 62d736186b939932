/**
 * Publish as a user runs it: the CLI process `publish <run> --no-push`, against the floor: `git
 * fast-import` fed the same files by the simplest reader (a short Python walk that writes each file
 * inline on fast-import's stdin, one commit, no checks; the interpreter itself is run, not a version
 * manager's shim), in a repository of the same state.
 *
 * Two cases, each timed as pairs back to back (CLI, then floor):
 *   fresh    — the first publish into a fresh repository; the floor imports into a fresh one too.
 *   existing — a publish onto a branch that already holds a run of the same size; the floor's commit
 *              goes onto a branch that already holds the first run's files (`from` its tip).
 * Each pair reports wall time and CPU time (user + system of the process and every child it waited
 * for: /usr/bin/time, so git's processes count on both sides); the ratio to report on a shared
 * machine is the CPU one, and the median of the pairs. Also a `node -e 0` start-up, the floor node
 * itself cannot go under. Issue 53's target: <= 1.5x at 2,700 and 27,000 files.
 *
 * Two more floors, in the fresh case, to say what a node CLI that checks what it publishes cannot
 * go under: `nodeRead`, the same simplest reader written in node (walk, read each file, write it
 * inline on fast-import's stdin); `nodeCheck`, that reader also parsing each JSON sidecar a run's
 * rows name (result, grading, metrics, timing, transcript) and checking it against the package's
 * own schema (dist/model), the least `validate` does. Each is timed in the same pair, fresh
 * repository, same stream. And `cliUnchecked`: our CLI with `--allow-invalid` (no validation; the
 * safety walk stays), what the rest of a publish costs. Last, each language's start-up (`node -e 0`,
 * `python3 -c 0`), wall.
 *   npm run build && node bench/publish-cli-floor.mjs 2700 [pairs=5]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';
const { isolateGitEnv, makeWorkDir, workspaceOfSize, freshRepo } = await import('./publish-lib.mjs');
isolateGitEnv();
const size = Number(process.argv[2] ?? 27000);
const pairs = Number(process.argv[3] ?? 5);
const work = await makeWorkDir();
const first = await workspaceOfSize(work, size, { seed: size, day: 0 });
const second = await workspaceOfSize(work, size, { seed: size + 1, day: 1 });
// The interpreter itself, not a launcher in front of it: a version manager's shim on PATH (pyenv's
// is a shell script) adds ~80 ms to every start, which the floor must not carry.
const python = (spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout ?? '').trim();
if (!python) throw new Error('publish-cli-floor: python3 is needed for the floor');
const feeder = join(work, 'feed.py');
// argv: root, then `from` (a commit to build on) or nothing.
writeFileSync(
  feeder,
  `import os,sys
root=sys.argv[1]; out=sys.stdout.buffer
out.write(b"commit refs/heads/floor\\ncommitter B <b@b.invalid> 1767225600 +0000\\ndata 5\\nfloor\\n")
if len(sys.argv)>2: out.write(b"from "+sys.argv[2].encode()+b"\\n")
for d,_,fs in os.walk(root):
  for f in fs:
    p=os.path.join(d,f); b=open(p,'rb').read(); rel=os.path.relpath(p,root)
    out.write(b'M 100644 inline "'+os.path.basename(os.path.dirname(root)).encode()+b'/'+rel.encode()+b'"\\ndata '+str(len(b)).encode()+b'\\n'+b+b'\\n')
out.write(b"done\\n")
`,
);
const nodeFeeder = join(work, 'feed.mjs');
// argv: root, then --check or nothing. Same stream as feed.py, written once at the end.
writeFileSync(
  nodeFeeder,
  `import { readdirSync, readFileSync, writeSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
const root = process.argv[2];
let schemas = null;
if (process.argv[3] === '--check') {
  const a = await import(${JSON.stringify(join(ROOT, 'dist/model/artifacts.js'))});
  const t = await import(${JSON.stringify(join(ROOT, 'dist/model/transcript.js'))});
  schemas = { 'result.json': a.ResultSchema, 'grading.json': a.GradingSchema, 'metrics.json': a.MetricsSchema, 'timing.json': a.AttemptTimingSchema, 'transcript.json': t.TranscriptSchema };
}
const prefix = basename(dirname(root));
const out = [Buffer.from('commit refs/heads/floor\\ncommitter B <b@b.invalid> 1767225600 +0000\\ndata 5\\nfloor\\n')];
let bad = 0;
let checked = 0;
(function walk(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) { walk(p); continue; }
    const b = readFileSync(p);
    out.push(Buffer.from('M 100644 inline "' + prefix + '/' + relative(root, p) + '"\\ndata ' + b.length + '\\n'), b, Buffer.from('\\n'));
    // A test's sidecars sit in its own folder; the run's top-level timing.json is not a test's.
    const schema = schemas !== null && dir !== root ? schemas[e.name] : undefined;
    if (schema === undefined) continue;
    checked++;
    if (!schema.safeParse(JSON.parse(b.toString('utf8'))).success) bad++;
  }
})(root);
out.push(Buffer.from('done\\n'));
writeSync(1, Buffer.concat(out));
if (schemas !== null) process.stderr.write(checked + ' checked, ' + bad + ' do not match their schema\\n');
`,
);
{
  // Once, before timing: the checking floor does check every test's sidecars, and they all pass.
  const r = spawnSync(process.execPath, [nodeFeeder, first.dir, '--check'], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const [checked, bad] = (/^(\d+) checked, (\d+) do not/.exec(r.stderr) ?? []).slice(1).map(Number);
  if (r.status !== 0 || !(checked >= first.files / 2) || bad !== 0) throw new Error(`the checking floor did not check the run: ${r.stderr}`);
}
const timeFile = join(work, 'time.txt');

/** Runs `argv` under /usr/bin/time: wall and CPU (user + sys, children included) seconds. */
function timed(argv, cwd) {
  const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%e %U %S', ...argv], { cwd, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
  const [wall, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: user + sys };
}
const cli = (ws, repo, ...extra) => timed([process.execPath, join(ROOT, 'dist/cli/main.js'), 'publish', ws.dir, '--no-push', ...extra], repo);
const floor = (ws, repo, from) => timed(['sh', '-c', `${python} ${feeder} ${ws.dir} ${from ?? ''} | git fast-import --quiet --done`], repo);
const nodeFloor = (ws, repo, check) =>
  timed(['sh', '-c', `${process.execPath} ${nodeFeeder} ${ws.dir} ${check ? '--check' : ''} | git fast-import --quiet --done`], repo);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = { fresh: [], existing: [] };
const nodeRows = { nodeRead: [], nodeCheck: [], cliUnchecked: [] };
const nodeStart = [];
const starts = { node: [], python: [] };
for (let i = 0; i < pairs; i++) {
  const n = timed([process.execPath, '-e', '0'], work);
  nodeStart.push(n.cpu);
  starts.node.push(n.wall);
  starts.python.push(timed([python, '-c', '0'], work).wall);
  // fresh: the first publish, the first import.
  const a = await freshRepo(work, `cli-${i}`);
  const b = await freshRepo(work, `floor-${i}`);
  const c = cli(first, a);
  const f = floor(first, b);
  rows.fresh.push({ c, f });
  nodeRows.nodeRead.push({ c: nodeFloor(first, await freshRepo(work, `node-read-${i}`), false), f });
  nodeRows.nodeCheck.push({ c: nodeFloor(first, await freshRepo(work, `node-check-${i}`), true), f });
  // Our CLI with validation off (--allow-invalid): what the rest of a publish costs.
  nodeRows.cliUnchecked.push({ c: cli(first, await freshRepo(work, `cli-unchecked-${i}`), '--allow-invalid'), f });
  // existing: the second run onto the branch the first made.
  const c2 = cli(second, a);
  const tip = spawnSync('git', ['rev-parse', 'refs/heads/floor'], { cwd: b, encoding: 'utf8' }).stdout.trim();
  const f2 = floor(second, b, tip);
  rows.existing.push({ c: c2, f: f2 });
}
const r2 = (x) => Math.round(x * 100) / 100;
/** One case's medians over its pairs (the ratios taken pair by pair), with what `extra` adds. */
const summary = (name, list, extra) =>
  JSON.stringify({
    case: name,
    files: first.files ?? size,
    pairs: list.length,
    medianCpuRatio: r2(median(list.map(({ c, f }) => c.cpu / f.cpu))),
    medianWallRatio: r2(median(list.map(({ c, f }) => c.wall / f.wall))),
    ...extra,
  });
for (const [name, list] of Object.entries(rows)) {
  for (const { c, f } of list)
    console.log(
      JSON.stringify({
        case: name,
        files: first.files ?? size,
        cliWall: c.wall,
        floorWall: f.wall,
        cliCpu: r2(c.cpu),
        floorCpu: r2(f.cpu),
        cpuRatio: r2(c.cpu / f.cpu),
      }),
    );
  console.log(
    summary(name, list, {
      medianCliCpu: r2(median(list.map(({ c }) => c.cpu))),
      medianFloorCpu: r2(median(list.map(({ f }) => f.cpu))),
      medianNodeStartCpu: r2(median(nodeStart)),
    }),
  );
}
// The node floors, against the same pairs' floor: what a node reader costs, one that checks, and
// our CLI with its validation off.
for (const [name, list] of Object.entries(nodeRows))
  console.log(summary(name, list, { medianWall: r2(median(list.map(({ c }) => c.wall))), medianFloorWall: r2(median(list.map(({ f }) => f.wall))) }));
// What each language costs to start: the floor's reader is Python, ours is node.
console.log(JSON.stringify({ case: 'startup', pairs, medianNodeWall: r2(median(starts.node)), medianPythonWall: r2(median(starts.python)) }));
