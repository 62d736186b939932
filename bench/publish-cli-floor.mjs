/**
 * Publish as a user runs it: the CLI process `publish <run> --no-push`, against the floor: `git
 * fast-import` fed the same files by the simplest reader (a short Python walk that writes each file
 * inline on fast-import's stdin, one commit, no checks), in a repository of the same state.
 *
 * Two cases, each timed as pairs back to back (CLI, then floor):
 *   fresh    — the first publish into a fresh repository; the floor imports into a fresh one too.
 *   existing — a publish onto a branch that already holds a run of the same size; the floor's commit
 *              goes onto a branch that already holds the first run's files (`from` its tip).
 * Each pair reports wall time and CPU time (user + system of the process and every child it waited
 * for: /usr/bin/time, so git's processes count on both sides); the ratio to report on a shared
 * machine is the CPU one, and the median of the pairs. Also a `node -e 0` start-up, the floor node
 * itself cannot go under. Issue 53's target: <= 1.5x at 2,700 and 27,000 files.
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
const timeFile = join(work, 'time.txt');

/** Runs `argv` under /usr/bin/time: wall and CPU (user + sys, children included) seconds. */
function timed(argv, cwd) {
  const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%e %U %S', ...argv], { cwd, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
  const [wall, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: user + sys };
}
const cli = (ws, repo) => timed([process.execPath, join(ROOT, 'dist/cli/main.js'), 'publish', ws.dir, '--no-push'], repo);
const floor = (ws, repo, from) => timed(['sh', '-c', `python3 ${feeder} ${ws.dir} ${from ?? ''} | git fast-import --quiet --done`], repo);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rows = { fresh: [], existing: [] };
const nodeStart = [];
for (let i = 0; i < pairs; i++) {
  nodeStart.push(timed([process.execPath, '-e', '0'], work).cpu);
  // fresh: the first publish, the first import.
  const a = await freshRepo(work, `cli-${i}`);
  const b = await freshRepo(work, `floor-${i}`);
  const c = cli(first, a);
  const f = floor(first, b);
  rows.fresh.push({ c, f });
  // existing: the second run onto the branch the first made.
  const c2 = cli(second, a);
  const tip = spawnSync('git', ['rev-parse', 'refs/heads/floor'], { cwd: b, encoding: 'utf8' }).stdout.trim();
  const f2 = floor(second, b, tip);
  rows.existing.push({ c: c2, f: f2 });
}
const r2 = (x) => Math.round(x * 100) / 100;
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
    JSON.stringify({
      case: name,
      files: first.files ?? size,
      pairs: list.length,
      medianCpuRatio: r2(median(list.map(({ c, f }) => c.cpu / f.cpu))),
      medianWallRatio: r2(median(list.map(({ c, f }) => c.wall / f.wall))),
      medianCliCpu: r2(median(list.map(({ c }) => c.cpu))),
      medianFloorCpu: r2(median(list.map(({ f }) => f.cpu))),
      medianNodeStartCpu: r2(median(nodeStart)),
    }),
  );
}
