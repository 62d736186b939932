/**
 * Publish as a user runs it: the CLI process `publish <run> --no-push` into a fresh repository,
 * against the floor: `git fast-import` fed the same files by the simplest reader (a short Python
 * walk that writes each file inline), also a fresh repository. Three pairs, back to back; prints
 * one JSON line a pair. Issue 53's target: <= 1.5x at 2,700 and 27,000 files.
 *   npm run build && node bench/publish-cli-floor.mjs 27000
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './lib.mjs';
const { isolateGitEnv, makeWorkDir, workspaceOfSize, freshRepo } = await import('./publish-lib.mjs');
isolateGitEnv();
const size = Number(process.argv[2] ?? 27000);
const work = await makeWorkDir();
const ws = await workspaceOfSize(work, size, { seed: size, day: 0 });
const feeder = join(work, 'feed.py');
writeFileSync(
  feeder,
  `import os,sys
root=sys.argv[1]; out=sys.stdout.buffer
out.write(b"commit refs/heads/floor\\ncommitter B <b@b.invalid> 1767225600 +0000\\ndata 5\\nfloor\\n")
for d,_,fs in os.walk(root):
  for f in fs:
    p=os.path.join(d,f); b=open(p,'rb').read(); rel=os.path.relpath(p,root)
    out.write(b'M 100644 inline "r/'+rel.encode()+b'"\\ndata '+str(len(b)).encode()+b'\\n'+b+b'\\n')
out.write(b"done\\n")
`,
);
for (let i = 0; i < 3; i++) {
  const a = await freshRepo(work, `cli-${i}`);
  let t = performance.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'publish', ws.dir, '--no-push'], {
    cwd: a,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  const cli = performance.now() - t;
  if (r.status !== 0) throw new Error(r.stderr);
  const b = await freshRepo(work, `floor-${i}`);
  t = performance.now();
  const f = spawnSync('sh', ['-c', `python3 ${feeder} ${ws.dir} | git fast-import --quiet --done`], { cwd: b, env: process.env });
  const floor = performance.now() - t;
  if (f.status !== 0) throw new Error(String(f.stderr));
  console.log(JSON.stringify({ files: ws.files ?? size, cli: Math.round(cli), floor: Math.round(floor), ratio: (cli / floor).toFixed(2) }));
}
