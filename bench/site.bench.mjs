/**
 * `site` figures (docs/site.md): the static history site of a results branch of SITE_RUNS runs
 * (default 20,000; seeded by bench/archive-lib.mjs seedLiveRuns: the trees of one template run of
 * 4 tests grafted), each figure beside a baseline measured in the same run: `listRuns` of the same
 * branch (reading the catalog, what every view of the site starts from).
 *
 * - the first build: wall time, files, bytes (the site's size) and the bytes per run;
 * - after one more run is published: the rebuild's wall time as a ratio of the first build
 *   (target <= 10%), and how many files it wrote;
 * - a rebuild with nothing new.
 * One sample each (the first build of 20,000 runs takes long); the machine is shared.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmtMs, fmtRatio, ROOT } from './lib.mjs';
import { seedLiveRuns } from './archive-lib.mjs';
import { freshRepo, isolateGitEnv, listRuns, makeWorkspace, publish } from './publish-lib.mjs';

const { site } = await import(join(ROOT, 'dist/site/index.js'));
const COUNT = Number(process.env.SITE_RUNS ?? 20_000);
export const optIn = true;

async function du(dir) {
  let files = 0;
  let bytes = 0;
  const walk = async (d) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        files++;
        bytes += (await stat(p)).size;
      }
    }
  };
  await walk(dir);
  return { files, bytes };
}

const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export async function run() {
  isolateGitEnv();
  const work = await mkdtemp(join(tmpdir(), 'agentv-site-bench-'));
  try {
    const template = await makeWorkspace(work, { rows: 4, turns: 2, seed: 5 });
    const repo = await freshRepo(work, 'repo');
    // The root written by mktree (bench/archive-lib.mjs): one fast-import of 20,000 runs at the root takes most of an hour.
    await seedLiveRuns(repo, template, { count: COUNT, perDay: 100, experiment: 'bench' });
    await mkdir(join(repo, '.agentv'), { recursive: true });
    await writeFile(join(repo, '.agentv', 'config.yaml'), 'results:\n  path: .\n  branch: agentv/results/v1\n');
    const out = join(work, 'public');
    const list = await timed(() => listRuns({ cwd: repo }));
    process.stderr.write(`site bench: ${COUNT} runs seeded; listRuns ${fmtMs(list.ms)}; first build…\n`);
    let last = 0;
    const onProgress = (done, total) => {
      // A line every 5% (the first build of 20,000 runs takes long on a shared machine).
      if (done - last < total / 20 && done !== total) return;
      last = done;
      process.stderr.write(`site bench: ${done}/${total} runs and compared pairs\n`);
    };
    const first = await timed(() => site({ cwd: repo, out, onProgress }));
    const size = await du(out);
    process.stderr.write(`site bench: first build ${fmtMs(first.ms)}, ${size.files} files, ${mb(size.bytes)}\n`);
    // One more run, later than every seeded one.
    const extra = await makeWorkspace(work, { rows: 4, turns: 2, seed: 9, day: Math.ceil(COUNT / 100) + 5, experiment: 'bench' });
    await publish({ run: extra.dir, cwd: repo });
    const list2 = await timed(() => listRuns({ cwd: repo }));
    const again = await timed(() => site({ cwd: repo, out }));
    const idle = await timed(() => site({ cwd: repo, out }));
    const r = again.value;
    const markdown = `## Static site (\`site\`, bench/site.bench.mjs)

A results branch of ${COUNT.toLocaleString('en')} runs (4 tests each, one template run's trees grafted: bench/archive-lib.mjs seedLiveRuns),
built into a static site; baseline: \`listRuns\` of the same branch (${fmtMs(list.ms)}; ${fmtMs(list2.ms)} after the new run).
\`SITE_RUNS=<n> npm run bench -- site\` (opt-in: the first build takes long).

| | wall time | vs listRuns | files written | site |
|---|---:|---:|---:|---:|
| first build, ${COUNT.toLocaleString('en')} runs | ${fmtMs(first.ms)} | ${fmtRatio(first.ms / list.ms)} | ${first.value.filesWritten.toLocaleString('en')} | ${size.files.toLocaleString('en')} files, ${mb(size.bytes)} (${(size.bytes / COUNT / 1024).toFixed(1)} KB a run) |
| rebuild after one new run | ${fmtMs(again.ms)} | ${fmtRatio(again.ms / list2.ms)} | ${r.filesWritten} (${r.runsBuilt} run read, ${r.filesUnchanged.toLocaleString('en')} unchanged) | |
| rebuild, nothing new | ${fmtMs(idle.ms)} | ${fmtRatio(idle.ms / list2.ms)} | ${idle.value.filesWritten} | |

The rebuild after one new run took **${((again.ms / first.ms) * 100).toFixed(1)}%** of the first build (target ≤ 10%). What it
still does for every run is cheap: the catalog is read once, each run's listing line hashed and
looked up in the manifest; it reads the new run, its comparison with the run before it, the
listing's index and last page and the trends (the newest 50 runs of each series).
${
  COUNT < 20_000
    ? `
Not measured at 20,000 runs here: the first build costs ${fmtMs(first.ms / COUNT)} a run on this host, so 20,000 runs would
take about ${(((first.ms / COUNT) * 20_000) / 3_600_000).toFixed(1)} h once (the build grows linearly: the runs are read in batches, a few git
processes a batch, and what each run costs is writing its private copy, reading it, rendering its
report and writing its files); a rebuild after one new run stays what it is above plus listing
20,000 catalog lines (see "publish and list").
`
    : ''
}`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
