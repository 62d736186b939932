/**
 * Issue 31's figures for AgentV's stable release (4.42) branch layout, `runs/<exp>/<ts>/`:
 *
 *  1. publishing a 4.42 run (`publish({push: false})`, one commit, no push) vs 4.42's own
 *     `auto_push` of the same run committing locally: its library's `directPushResults` with
 *     `auto_push: false`, imported from the installed client (`agentv-stable`'s cache) — <= 0.5x;
 *     on the real sample run and on the same run scaled up (its per-test folders copied);
 *  2. `list` over 10,000 runs in 4.42's layout (no catalog line: each run's own index.jsonl is
 *     read) vs `list` over 10,000 runs in our catalog — <= 2x.
 *
 * Medians; the two sides of every ratio are sampled interleaved. Needs the stable client beside
 * the repository (`../shared/agentv-client/agentv-stable`, installed once): skipped otherwise.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, fmtMs, fmtRatio, median, timeIt } from './lib.mjs';
import { freshRepo, git, isolateGitEnv, listRuns, makeWorkDir, makeWorkspace, publish, rootCommit, seedRuns, streamTo, RESULTS_REF } from './publish-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CLIENT_DIR = process.env.AGENTV_CLIENT_DIR ?? resolve(ROOT, '../shared/agentv-client');
const STABLE = join(CLIENT_DIR, 'agentv-stable');
const VERSION = process.env.AGENTV_STABLE_VERSION ?? '4.42.4';
const log = (m) => process.stderr.write(`  ${m}\n`);
const pass = (ok) => (ok ? '✅' : '❌');

const time = async (fn) => (await timeIt(fn)).ms;

/** 4.42's library module exporting `directPushResults`, from the installed client's cache. */
async function stableLibrary() {
  const cache = process.env.AGENTV_CLIENT_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agentv-client');
  const dist = join(cache, `agentv-${VERSION}`, 'node_modules', 'agentv', 'dist');
  for (const f of (await readdir(dist)).filter((n) => n.endsWith('.js'))) {
    const text = await readFile(join(dist, f), 'utf8');
    if (!/async function directPushResults\(/.test(text)) continue;
    const mod = await import(join(dist, f));
    if (typeof mod.directPushResults === 'function') return mod.directPushResults;
  }
  throw new Error(`directPushResults not found in ${dist}`);
}

/** A real 4.42 run of the sample project (its eval, offline), copied out of the project. */
export async function sampleRun(work) {
  const project = join(work, 'sample');
  await cp(join(CLIENT_DIR, 'sample-project-stable'), project, { recursive: true });
  const r = spawnSync(STABLE, ['eval', 'evals/demo.eval.yaml', '--experiment', 'bench'], {
    cwd: project,
    env: { ...process.env, HOME: work, CI: '1' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`agentv-stable eval: ${r.stderr}`);
  const root = join(project, '.agentv', 'results', 'runs', 'bench');
  const [ts] = await readdir(root);
  return { dir: join(root, ts), ts };
}

/** The sample run scaled: its `<suite>/<test>/` folders copied `factor` times under new test ids, rows to match. */
async function scaledRun(work, sample, factor) {
  const dir = join(work, 'scaled', 'bench', sample.ts);
  await cp(sample.dir, dir, { recursive: true });
  const rows = (await readFile(join(sample.dir, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const suites = (await readdir(sample.dir, { withFileTypes: true })).filter((e) => e.isDirectory());
  const out = [];
  for (let k = 0; k < factor; k++) {
    for (const s of suites)
      for (const t of await readdir(join(sample.dir, s.name))) await cp(join(sample.dir, s.name, t), join(dir, s.name, `${t}-${k}`), { recursive: true });
    for (const row of rows) out.push(row.replace(/"test_id":"([^"]+)"/, `"test_id":"$1-${k}"`).replaceAll(/"(demo\/[^/"]+)\//g, `"$1-${k}/`));
  }
  await writeFile(join(dir, 'index.jsonl'), `${out.join('\n')}\n`);
  return { dir, ts: sample.ts };
}

async function countFiles(dir) {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;
}

/** 1. Ours vs 4.42's auto_push committing the same run to a fresh repository, interleaved. */
async function publishVsAutoPush(work, run, directPushResults) {
  const ours = [];
  const theirs = [];
  const home = await mkdtemp(join(tmpdir(), 'bench-stable-home-'));
  const realHome = process.env.HOME;
  for (let i = 0; i < RUNS + 1; i++) {
    const [a, b] = [await freshRepo(work, `ours-${i}`), await freshRepo(work, `theirs-${i}`)];
    for (const d of [a, b]) {
      await git.runGit(['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: d });
    }
    const o = await time(() => publish({ run: run.dir, cwd: a, push: false }));
    process.env.HOME = home; // 4.42 keeps a status file under ~/.agentv
    const t = await time(() =>
      directPushResults({
        config: { repo_path: b, branch: 'agentv/results/v1', auto_push: false },
        sourceDir: run.dir,
        destinationPath: `bench/${run.ts}`,
        commitMessage: 'feat(results): bench',
      }),
    );
    process.env.HOME = realHome;
    const [ta, tb] = await Promise.all(
      [a, b].map(async (d) => (await git.runGit(['rev-parse', `${RESULTS_REF}^{tree}`], { cwd: d })).stdout.toString().trim()),
    );
    const [sa, sb] = await Promise.all(
      [a, b].map(async (d, j) =>
        (await git.runGit(['rev-parse', `${j === 0 ? RESULTS_REF : 'refs/heads/agentv/results/v1'}:runs/bench/${run.ts}`], { cwd: d })).stdout
          .toString()
          .trim(),
      ),
    );
    if (sa !== sb) throw new Error(`the run's tree differs: ours ${sa}, 4.42's ${sb} (roots ${ta} / ${tb})`);
    if (i > 0) {
      ours.push(o);
      theirs.push(t);
    }
    for (const d of [a, b]) await rm(d, { recursive: true, force: true });
  }
  await rm(home, { recursive: true, force: true });
  return { ours: median(ours), theirs: median(theirs), files: await countFiles(run.dir) };
}

/** 10,000 runs in 4.42's layout from the sample run, each with its own index (one timestamp differs), in one fast-import. */
export async function seedStableRuns(repo, sample, count) {
  const r = await git.openRepo(repo);
  const root = await rootCommit(r);
  const files = (await readdir(sample.dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(sample.dir.length + 1));
  const index = await readFile(join(sample.dir, 'index.jsonl'), 'utf8');
  const proc = git.spawnGit(['fast-import', '--quiet', '--done'], { gitDir: r.gitDir });
  proc.stdout.resume();
  const chunks = [];
  const marks = new Map();
  let mark = 0;
  for (const f of files) {
    if (f === 'index.jsonl') continue;
    const data = await readFile(join(sample.dir, f));
    marks.set(f, ++mark);
    chunks.push(Buffer.from(`blob\nmark :${mark}\ndata ${data.length}\n`), data, Buffer.from('\n'));
  }
  chunks.push(Buffer.from(`commit ${RESULTS_REF}\ncommitter Bench <bench@example.invalid> 1767225600 +0000\ndata 4\nseed\nfrom ${root}\n`));
  for (let i = 0; i < count; i++) {
    const ts = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace(/:/g, '-').replace('.', '-');
    const exp = `exp-${i % 10}`;
    const text = index.replace(/"timestamp":"[^"]+"/, `"timestamp":"${ts}"`);
    chunks.push(Buffer.from(`M 100644 inline runs/${exp}/${ts}/index.jsonl\ndata ${Buffer.byteLength(text)}\n${text}\n`));
    for (const f of files) if (f !== 'index.jsonl') chunks.push(Buffer.from(`M 100644 :${marks.get(f)} runs/${exp}/${ts}/${f}\n`));
  }
  chunks.push(Buffer.from('\ndone\n'));
  await streamTo(proc, chunks);
  proc.stdin.end();
  await proc.exited;
}

/** 2. `list` over 10,000 4.42 runs vs 10,000 catalogued runs of the same number of tests, interleaved. */
async function listing(work, sample) {
  const COUNT = 10_000;
  const stable = await freshRepo(work, 'stable-10000');
  let t0 = performance.now();
  await seedStableRuns(stable, sample, COUNT);
  const seedStable = performance.now() - t0;
  const template = await makeWorkspace(work, { rows: 6, seed: 31, turns: 1 });
  const ours = await freshRepo(work, 'ours-10000');
  t0 = performance.now();
  await seedRuns(ours, template, { count: COUNT, days: 100 });
  const seedOurs = performance.now() - t0;
  const a = [];
  const b = [];
  let counts = null;
  let cold = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    let sr = null;
    let orr = null;
    const ts = await time(async () => (sr = await listRuns({ cwd: stable })));
    const to = await time(async () => (orr = await listRuns({ cwd: ours })));
    counts ??= { stable: sr.runs.length, ours: orr.runs.length };
    if (i === 0) cold = ts;
    if (i > 0) {
      a.push(ts);
      b.push(to);
    }
  }
  return { stable: median(a), ours: median(b), cold, counts, seedStable, seedOurs, count: COUNT };
}

export async function run() {
  if (!existsSync(STABLE)) {
    return { markdown: `## AgentV 4.42 layout figures (issue 31)\n\nSkipped: the stable client was not found at ${STABLE}.\n` };
  }
  isolateGitEnv();
  const work = await makeWorkDir();
  try {
    const load = (await import('node:os')).loadavg()[0];
    const directPushResults = await stableLibrary();
    const sample = await sampleRun(work);
    log('publish vs auto_push (sample run)…');
    const p1 = await publishVsAutoPush(work, sample, directPushResults);
    const big = await scaledRun(work, sample, 20);
    log('publish vs auto_push (scaled run)…');
    const p2 = await publishVsAutoPush(work, big, directPushResults);
    log('list over 10,000 runs…');
    const l = await listing(work, sample);
    const r1 = p1.ours / p1.theirs;
    const r2 = p2.ours / p2.theirs;
    const rl = l.stable / l.ours;
    const markdown = `## AgentV 4.42 layout figures (issue 31)

AgentV's stable release writes \`runs/<experiment>/<timestamp>/\` on the results branch. Medians of ${RUNS} interleaved samples; git ${(await git.gitVersion()).raw}, Node ${process.version}; load average ${load.toFixed(1)} on ${(await import('node:os')).cpus().length} cores when the run started. Reproduce: \`npm run bench -- stable-layout\` (needs \`../shared/agentv-client/agentv-stable\`).

| figure | baseline | measured | ratio | target |
|---|---|---|---|---|
| publish of a real 4.42 run (${p1.files} files, the sample project's) as one local commit, \`publish({push: false})\` | 4.42's \`auto_push\` committing it locally (its \`directPushResults\`, \`auto_push: false\`): ${fmtMs(p1.theirs)} | ${fmtMs(p1.ours)} | **${fmtRatio(r1)}** | ≤ 0.5x ${pass(r1 <= 0.5)} |
| the same, the run scaled to ${p2.files} files (its test folders copied) | ${fmtMs(p2.theirs)} | ${fmtMs(p2.ours)} | **${fmtRatio(r2)}** | ≤ 0.5x ${pass(r2 <= 0.5)} |
| \`list\` over ${l.count.toLocaleString('en-US')} runs in 4.42's layout (${l.counts.stable.toLocaleString('en-US')} listed, no catalog line) | ${l.count.toLocaleString('en-US')} runs in our catalog (${l.counts.ours.toLocaleString('en-US')} listed): ${fmtMs(l.ours)} | ${fmtMs(l.stable)} | **${fmtRatio(rl)}** | ≤ 2x ${pass(rl <= 2)} |
| the first such \`list\` after the runs arrived (every run's index.jsonl read and parsed, the rows cached) | the same: ${fmtMs(l.ours)} | ${fmtMs(l.cold)} | ${fmtRatio(l.cold / l.ours)} | (one-off) |

Both publishes produce the same tree for the run (checked on every sample: byte for byte what 4.42 commits). 4.42's commit runs one \`git hash-object\` and one \`git update-index\` per file; ours streams the files into one \`git fast-import\`. The 4.42 branch's runs were seeded with one fast-import in ${fmtMs(l.seedStable)} (ours in ${fmtMs(l.seedOurs)}); \`list\` finds them with one \`ls-tree\` of the root and two \`cat-file --batch\` reads of \`runs/\` and its experiment trees, then reads every run's index in one more batch. A run 4.42 published has no catalog line of ours, so its counts come from its own index.jsonl (about 15 KB for the 6-result sample run; most of the first listing's time is parsing 10,000 of them). The rows derived are cached in the git directory keyed by the run's tree id and path (\`layout/run-index.ts\`): a run that changes has a new tree, so a cached row is never stale, and later listings read only the runs new since.
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
