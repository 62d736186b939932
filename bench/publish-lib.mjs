/**
 * Helpers of bench/publish.bench.mjs: synthetic run workspaces of a given size, the two
 * baselines (raw fast-import of the same files; one git process per file), and bulk seeding of a
 * results branch with thousands of runs in one fast-import. git runs through the project's own
 * runner (dist/git), like everything else.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ROOT } from './lib.mjs';
import { rng, syntheticRow } from './synthetic.mjs';

const dist = (p) => join(ROOT, 'dist', p);
export const git = await import(dist('git/index.js'));
export const { exportRun } = await import(dist('runs/export/export.js'));
export const { publish } = await import(dist('publish/publish.js'));
export const { listRuns } = await import(dist('branch-read/list.js'));
export const { rootCommit } = await import(dist('publish/commit-run.js'));
const { isPayload } = await import(dist('publish/split.js'));
/** Whether publish sends a template file to the artifacts branch (a transcript, or a file over the threshold). */
export const isHeavy = (rel, size, threshold) => isPayload(rel, size, { transcripts: new Set(), threshold });
export const { RESULTS_GITATTRIBUTES } = await import(dist('layout/branch-layout.js'));

export const RESULTS_REF = 'refs/heads/agentv/results/v1';
export const ARTIFACTS_REF = 'refs/heads/agentv/artifacts/v1';
export const IDENT = { name: 'Bench', email: 'bench@example.invalid' };

function emptyGitConfig() {
  const file = join(mkdtempSync(join(tmpdir(), 'agentv-bench-gitconfig-')), '.gitconfig');
  writeFileSync(file, '');
  return file;
}

/** Isolated git configuration: no user/system config, a fixed identity. */
export function isolateGitEnv() {
  Object.assign(process.env, {
    GIT_CONFIG_NOSYSTEM: '1',
    // An empty file of our own, not /dev/null: a machine whose /dev/null was damaged still benches.
    GIT_CONFIG_GLOBAL: emptyGitConfig(),
    GIT_AUTHOR_NAME: IDENT.name,
    GIT_AUTHOR_EMAIL: IDENT.email,
    GIT_COMMITTER_NAME: IDENT.name,
    GIT_COMMITTER_EMAIL: IDENT.email,
  });
}

export async function freshRepo(parent, name) {
  const dir = join(parent, name);
  await git.runGit(['init', '-q', '-b', 'main', dir]);
  return dir;
}

/**
 * A run workspace exported from synthetic rows: `day`/`minute` give distinct run ids of one
 * experiment (the run id comes from the earliest row timestamp).
 */
export async function makeWorkspace(parent, { rows, seed = 1, day = 0, minute = 0, turns = 4, experiment = 'bench' }) {
  const dir = await mkdtemp(join(parent, 'ws-'));
  const r = rng(seed);
  const base = Date.UTC(2026, 0, 1 + day, 9, 0) + minute * 60_000;
  let text = '';
  for (let i = 0; i < rows; i++) {
    const row = syntheticRow(r, i, { turns });
    row.timestamp = new Date(base + i * 1000).toISOString();
    text += JSON.stringify(row) + '\n';
  }
  await writeFile(join(dir, 'results.jsonl'), text);
  const res = await exportRun({ source: join(dir, 'results.jsonl'), out: join(dir, 'run'), experiment, cwd: dir });
  return { dir: res.outDir, runId: res.runId };
}

export async function listFiles(root) {
  const out = [];
  const walk = async (rel) => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else out.push(p);
    }
  };
  await walk('');
  return out.sort();
}

/** A workspace with about `files` files (the export writes ~6 per row). */
export async function workspaceOfSize(parent, files, opts = {}) {
  const probe = await makeWorkspace(parent, { rows: 50, ...opts });
  const perRow = ((await listFiles(probe.dir)).length - 5) / 50;
  const ws = await makeWorkspace(parent, { rows: Math.max(1, Math.round((files - 5) / perRow)), ...opts });
  return { ...ws, files: (await listFiles(ws.dir)).length };
}

/** Streams pieces to a long-lived git process, honouring backpressure. */
/** Writes pieces (strings or buffers) to a git process's stdin in chunks of about 1 MiB. */
export async function streamTo(proc, pieces) {
  let buf = [];
  let size = 0;
  for (const p of pieces) {
    buf.push(typeof p === 'string' ? Buffer.from(p) : p);
    size += p.length;
    if (size >= 1 << 20) {
      await proc.write(Buffer.concat(buf));
      buf = [];
      size = 0;
    }
  }
  if (size > 0) await proc.write(Buffer.concat(buf));
}

/** The floor: every file of the workspace read and streamed into ONE `git fast-import` commit. */
export async function rawFastImport(repo, wsDir, prefix, { from = null } = {}) {
  const files = await listFiles(wsDir);
  // With a parent (`from`): the commit builds on that tree, as a publish onto an existing branch does.
  const proc = git.spawnGit(['fast-import', '--quiet', '--done', ...(from ? ['--force'] : [])], { gitDir: join(repo, '.git') });
  proc.stdout.resume();
  const pieces = [`commit refs/heads/floor\ncommitter Bench <bench@example.invalid> 1767225600 +0000\ndata 5\nfloor\n${from ? `from ${from}\n` : ''}`];
  for (const f of files) {
    const data = await readFile(join(wsDir, f));
    pieces.push(`M 100644 inline "${prefix}/${f}"\ndata ${data.length}\n`, data, '\n');
  }
  pieces.push('done\n');
  await streamTo(proc, pieces);
  proc.stdin.end();
  await proc.exited;
}

/**
 * The approach of the existing AgentV implementation: one `git hash-object -w` and one
 * `git update-index --add --cacheinfo` per file (a private index), then write-tree and commit-tree.
 * `limit` stops after that many files (the cost is two processes per file by construction).
 */
export async function perFileProcesses(repo, wsDir, prefix, { limit = Infinity } = {}) {
  const gitDir = join(repo, '.git');
  const env = { GIT_INDEX_FILE: join(gitDir, 'bench-perfile-index') };
  for (const f of (await listFiles(wsDir)).slice(0, limit)) {
    const sha = (await git.runGit(['hash-object', '-w', '--', join(wsDir, f)], { gitDir })).stdout.toString().trim();
    await git.runGit(['update-index', '--add', '--cacheinfo', `100644,${sha},${prefix}/${f}`], { gitDir, env });
  }
  const tree = (await git.runGit(['write-tree'], { gitDir, env })).stdout.toString().trim();
  const commit = (await git.runGit(['commit-tree', tree, '-m', 'per-file'], { gitDir })).stdout.toString().trim();
  await git.runGit(['update-ref', 'refs/heads/per-file', commit], { gitDir });
}

/**
 * Seeds both branches of `repo` with `count` runs of one experiment in ONE fast-import, in the
 * layout publish writes (AgentV's): each run at the branch root as `<experiment>--<timestamp>/`
 * with the light files of `template` (its own summary.json), its payloads on the artifacts branch,
 * one catalog line per run in `.indexes/agentv-results.<day>.jsonl`. Shared blobs are sent once (marks).
 */
export async function seedRuns(repo, template, { count, days, experiment = 'seed', startDay = 0 }) {
  const r = await git.openRepo(repo);
  const resultsRoot = await rootCommit(r);
  const artifactsRoot = resultsRoot;
  const files = await listFiles(template.dir);
  const summary = JSON.parse(await readFile(join(template.dir, 'summary.json'), 'utf8'));
  const proc = git.spawnGit(['fast-import', '--quiet', '--done'], { gitDir: r.gitDir });
  proc.stdout.resume();
  const pieces = [];
  let mark = 0;
  const marks = new Map();
  const heavySet = new Set();
  for (const f of files) {
    if (f === 'summary.json') continue;
    const data = await readFile(join(template.dir, f));
    if (isHeavy(f, data.length, 262144)) heavySet.add(f);
    marks.set(f, ++mark);
    pieces.push(`blob\nmark :${mark}\ndata ${data.length}\n`, data, '\n');
  }
  const perDay = Math.ceil(count / days);
  const commitHeader = (ref, from, msg) =>
    `commit ${ref}\ncommitter Bench <bench@example.invalid> 1767225600 +0000\ndata ${msg.length}\n${msg}\nfrom ${from}\n`;
  const results = [
    commitHeader(RESULTS_REF, resultsRoot, 'seed'),
    `M 100644 inline .gitattributes\ndata ${Buffer.byteLength(RESULTS_GITATTRIBUTES)}\n${RESULTS_GITATTRIBUTES}\n`,
  ];
  const artifacts = [commitHeader(ARTIFACTS_REF, artifactsRoot, 'seed')];
  const catalogs = new Map();
  for (let i = 0; i < count; i++) {
    const dayIndex = startDay + Math.floor(i / perDay);
    const ms = Date.UTC(2026, 0, 1 + dayIndex, 0, 0) + (i % perDay) * 1000;
    const iso = new Date(ms).toISOString();
    const slug = iso.replace(/:/g, '-').replace('.', '-');
    const day = iso.slice(0, 10);
    const runId = `${experiment}/${slug}`;
    const path = `${experiment}--${slug}`;
    const s = JSON.stringify({ ...summary, run_id: runId, experiment, timestamp: iso }, null, 2) + '\n';
    results.push(`M 100644 inline "${path}/summary.json"\ndata ${Buffer.byteLength(s)}\n${s}\n`);
    for (const f of files) {
      if (f === 'summary.json') continue;
      (heavySet.has(f) ? artifacts : results).push(`M 100644 :${marks.get(f)} "${path}/${f}"\n`);
    }
    const line = JSON.stringify({
      run_id: runId,
      experiment,
      timestamp: iso,
      path,
      targets: ['model-a', 'model-b'],
      total: summary.total ?? 0,
      passed: summary.passed ?? 0,
      failed: summary.failed ?? 0,
      pass_rate: summary.pass_rate ?? 0,
    });
    catalogs.set(day, (catalogs.get(day) ?? '') + line + '\n');
  }
  for (const [day, text] of catalogs) results.push(`M 100644 inline ".indexes/agentv-results.${day}.jsonl"\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  await streamTo(proc, [...pieces, ...results, '\n', ...artifacts, '\ndone\n']);
  proc.stdin.end();
  await proc.exited;
  return { results: await git.resolveRef(r, RESULTS_REF), artifacts: await git.resolveRef(r, ARTIFACTS_REF), resultsRoot, artifactsRoot };
}

/** Moves both branches back to given tips (compare-and-swap), e.g. to publish onto the same state again. */
export async function resetBranches(repo, tips) {
  const r = await git.openRepo(repo);
  const updates = [];
  for (const [ref, sha] of [
    [RESULTS_REF, tips.results],
    [ARTIFACTS_REF, tips.artifacts],
  ]) {
    const cur = await git.resolveRef(r, ref);
    if (cur !== sha) updates.push({ ref, new: sha, old: cur });
  }
  await git.updateRefs(r, updates);
}

/**
 * AgentV's own listing of the branch (listGitRuns in results-repo.ts, the Dashboard's /api/runs),
 * step for step with the same git calls: one `ls-tree -r --name-only` of the whole branch, one
 * `cat-file --batch` of every `*\/summary.json` (run and per-test summaries alike), one of every
 * run's index; every blob parsed. Returns the runs found and the listing's size in bytes.
 */
export async function agentvListing(repo) {
  const gitDir = join(repo, '.git');
  const listing = (await git.runGit(['ls-tree', '-r', '--name-only', RESULTS_REF], { gitDir })).stdout;
  const paths = listing.toString('utf8').split('\n').filter(Boolean);
  const summaries = paths.filter((p) => p.endsWith('/summary.json'));
  const batch = async (specs) =>
    await git.readBlobs(
      await git.openRepo(repo),
      specs.map((p) => `${RESULTS_REF}:${p}`),
    );
  const s = await batch(summaries);
  for (const v of s.values()) JSON.parse(v.toString('utf8'));
  const indexes = paths.filter((p) => /^[^./][^/]*\/(\.internal\/)?index\.jsonl$/.test(p));
  const ix = await batch(indexes);
  let rows = 0;
  for (const v of ix.values())
    for (const l of v.toString('utf8').split('\n'))
      if (l.trim()) {
        JSON.parse(l);
        rows++;
      }
  return { runs: indexes.length, rows, bytes: listing.length };
}

export async function makeWorkDir() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-publish-'));
  await mkdir(dir, { recursive: true });
  return dir;
}
