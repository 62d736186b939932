/**
 * Helpers of bench/archive.bench.mjs: a results repository in the state the archive policy leaves
 * after years of runs — a small live branch (the newest runs at the root), every older run on its
 * month's archive branch, and every run's catalog row on the live branch (`archived: "<YYYY-MM>"`
 * for the rolled-over ones) — written by ONE `git fast-import`. Each run directory is a graft of a
 * template run's tree (`M 040000 <tree> <dir>`), as the rollover itself grafts: publishing never
 * opens the archived runs, only the live root, `.indexes/` and the day's catalog file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACTS_REF, git, isHeavy, listFiles, RESULTS_GITATTRIBUTES, RESULTS_REF, rootCommit } from './publish-lib.mjs';

const RESULTS_ARCHIVE = 'refs/heads/agentv/results-archive/v1/';
const ARTIFACTS_ARCHIVE = 'refs/heads/agentv/artifacts-archive/v1/';
const COMMITTER = 'committer Bench <bench@example.invalid> 1767225600 +0000';

async function streamTo(proc, pieces) {
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

async function fastImport(r, pieces) {
  const proc = git.spawnGit(['fast-import', '--quiet', '--done'], { gitDir: r.gitDir });
  proc.stdout.resume();
  await streamTo(proc, [...pieces, 'done\n']);
  proc.stdin.end();
  await proc.exited;
}

/** The template run's light files (results branch) and payloads (artifacts branch) as two trees. */
async function templateTrees(r, template) {
  const pieces = [`commit refs/bench/template\n${COMMITTER}\ndata 8\ntemplate\n`];
  let heavy = 0;
  for (const f of await listFiles(template.dir)) {
    const data = await readFile(join(template.dir, f));
    const side = isHeavy(f, data.length, 262144) ? 'H' : 'L';
    if (side === 'H') heavy++;
    pieces.push(`M 100644 inline "${side}/${f}"\ndata ${data.length}\n`, data, '\n');
  }
  await fastImport(r, pieces);
  const tree = async (p) => (await git.runGit(['rev-parse', `refs/bench/template:${p}`], { gitDir: r.gitDir })).stdout.toString().trim();
  return { light: await tree('L'), heavy: heavy > 0 ? await tree('H') : null };
}

/**
 * Seeds `archived` rolled-over runs (`perDay` a day, on the days before the live ones) and `live`
 * runs at the root (`livePerDay` a day, the newest on day `lastDay`; day indexes count from
 * 2026-01-01, as publish-lib's makeWorkspace does). With `sameDayArchived`, that many archived runs
 * are on `lastDay` too, before the live ones (a day of more runs than the live window holds: the
 * rest were rolled over the same day). `archiveLayout`: `flat` (archives written before the day
 * shards: runs at the month root; what archive.bench.mjs measured) or `day` (what the rollover
 * writes now: each run under its day folder, `<YYYY-MM-DD>/<run>`; archive-shards.bench.mjs).
 */
export async function seedArchivedState(
  repo,
  template,
  { archived, live, perDay, lastDay, livePerDay = live, sameDayArchived = 0, experiment = 'seed', archiveLayout = 'flat' },
) {
  const r = await git.openRepo(repo);
  const genesis = await rootCommit(r);
  const trees = await templateTrees(r, template);
  // day -> its runs in time order, each archived or not
  const days = new Map();
  const add = (day, isArchived) => {
    if (!days.has(day)) days.set(day, []);
    days.get(day).push(isArchived);
  };
  const liveFirstDay = lastDay - Math.max(1, Math.ceil(live / Math.max(1, livePerDay))) + 1;
  const older = archived - sameDayArchived;
  const firstDay = liveFirstDay - Math.ceil(older / perDay);
  for (let i = 0; i < older; i++) add(firstDay + Math.floor(i / perDay), true);
  for (let i = 0; i < sameDayArchived; i++) add(lastDay, true);
  for (let i = 0; i < live; i++) add(liveFirstDay + Math.floor(i / Math.max(1, livePerDay)), false);
  const catalogs = new Map();
  const months = new Map();
  const liveDirs = [];
  for (const day of [...days.keys()].sort((a, b) => a - b)) {
    const lines = [];
    days.get(day).forEach((isArchived, i) => {
      const iso = new Date(Date.UTC(2026, 0, 1 + day, 0, 0) + i * 1000).toISOString();
      const slug = iso.replace(/:/g, '-').replace('.', '-');
      const path = `${experiment}--${slug}`;
      const month = iso.slice(0, 7);
      const line = {
        run_id: `${experiment}/${slug}`,
        experiment,
        timestamp: iso,
        path,
        targets: ['model-a', 'model-b'],
        total: 2,
        passed: 1,
        failed: 1,
        pass_rate: 0.5,
      };
      if (isArchived) {
        line.archived = month;
        if (!months.has(month)) months.set(month, []);
        months.get(month).push({ day: iso.slice(0, 10), path });
      } else liveDirs.push(path);
      lines.push(JSON.stringify(line));
    });
    catalogs.set(new Date(Date.UTC(2026, 0, 1 + day)).toISOString().slice(0, 10), `${lines.join('\n')}\n`);
  }
  const header = (ref, msg) => `commit ${ref}\n${COMMITTER}\ndata ${msg.length}\n${msg}\nfrom ${genesis}\n`;
  const graft = (tree, paths) => paths.map((p) => `M 040000 ${tree} "${p}"\n`);
  const pieces = [
    header(RESULTS_REF, 'seed'),
    `M 100644 inline .gitattributes\ndata ${Buffer.byteLength(RESULTS_GITATTRIBUTES)}\n${RESULTS_GITATTRIBUTES}\n`,
    ...graft(trees.light, liveDirs),
  ];
  for (const [day, text] of catalogs) pieces.push(`M 100644 inline ".indexes/agentv-results.${day}.jsonl"\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  pieces.push('\n', header(ARTIFACTS_REF, 'seed'), ...(trees.heavy ? graft(trees.heavy, liveDirs) : []), '\n');
  await fastImport(r, pieces);
  // The month archives: one `git mktree` each. fast-import inserts into a directory by a linear
  // scan, so 50,000 entries in one directory cost it minutes; mktree sorts once.
  const mktree = async (entries) =>
    (await git.runGit(['mktree'], { gitDir: r.gitDir, input: Buffer.from(entries.map(([name, tree]) => `040000 tree ${tree}\t${name}\n`).join('')) })).stdout
      .toString()
      .trim();
  for (const [month, runs] of months) {
    for (const [prefix, tree] of [
      [RESULTS_ARCHIVE, trees.light],
      [ARTIFACTS_ARCHIVE, trees.heavy],
    ]) {
      if (!tree) continue;
      let root;
      if (archiveLayout === 'flat') root = await mktree(runs.map((x) => [x.path, tree]));
      else {
        const byDay = new Map();
        for (const x of runs) {
          if (!byDay.has(x.day)) byDay.set(x.day, []);
          byDay.get(x.day).push([x.path, tree]);
        }
        const days = [];
        for (const [day, entries] of byDay) days.push([day, await mktree(entries)]);
        root = await mktree(days);
      }
      const env = { GIT_COMMITTER_DATE: '1767225600 +0000', GIT_AUTHOR_DATE: '1767225600 +0000' };
      const commit = (await git.runGit(['commit-tree', root, '-p', genesis, '-m', `archive ${month}`], { gitDir: r.gitDir, env })).stdout.toString().trim();
      await git.runGit(['update-ref', prefix + month, commit], { gitDir: r.gitDir });
    }
  }
  await git.runGit(['update-ref', '-d', 'refs/bench/template'], { gitDir: r.gitDir });
  return {
    results: await git.resolveRef(r, RESULTS_REF),
    artifacts: await git.resolveRef(r, ARTIFACTS_REF),
    months: months.size,
    catalogDays: catalogs.size,
    lastDayRows: (catalogs.get(new Date(Date.UTC(2026, 0, 1 + lastDay)).toISOString().slice(0, 10)) ?? '').split('\n').length - 1,
  };
}

/** Every object of the repository, as id -> type (for "what did this write"). */
export async function allObjects(repo) {
  const out = (await git.runGit(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)', '--unordered'], { cwd: repo })).stdout;
  const map = new Map();
  for (const line of out.toString('utf8').split('\n')) {
    if (!line) continue;
    const [id, type] = line.split(' ');
    map.set(id, type);
  }
  return map;
}

/** Root entries of a tree-ish: name -> object id. */
export async function rootEntries(repo, treeish) {
  const out = (await git.runGit(['ls-tree', '-z', treeish], { cwd: repo })).stdout.toString('utf8');
  const map = new Map();
  for (const rec of out.split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    map.set(rec.slice(tab + 1), rec.slice(0, tab).split(' ')[2]);
  }
  return map;
}

export const ARCHIVE_PREFIXES = { results: RESULTS_ARCHIVE, artifacts: ARTIFACTS_ARCHIVE };

/**
 * Seeds `count` runs at the root of the live results branch (`perDay` a day from 2026-01-01), each a
 * graft of the template run's tree, with their catalog rows: a branch of that many runs as publish
 * leaves it, before any archive policy. The root is written by `git mktree` (fast-import's linear
 * insertion would take minutes at 100,000 entries), the catalog files by one fast-import.
 */
export async function seedLiveRuns(repo, template, { count, perDay = 250, experiment = 'seed' }) {
  const r = await git.openRepo(repo);
  const genesis = await rootCommit(r);
  const trees = await templateTrees(r, template);
  const catalogs = new Map();
  const dirs = [];
  for (let i = 0; i < count; i++) {
    const iso = new Date(Date.UTC(2026, 0, 1 + Math.floor(i / perDay), 0, 0) + (i % perDay) * 1000).toISOString();
    const slug = iso.replace(/:/g, '-').replace('.', '-');
    const path = `${experiment}--${slug}`;
    dirs.push(path);
    const line = {
      run_id: `${experiment}/${slug}`,
      experiment,
      timestamp: iso,
      path,
      targets: ['model-a', 'model-b'],
      total: 2,
      passed: 1,
      failed: 1,
      pass_rate: 0.5,
    };
    const day = iso.slice(0, 10);
    catalogs.set(day, `${catalogs.get(day) ?? ''}${JSON.stringify(line)}\n`);
  }
  const pieces = [
    `commit refs/bench/catalog\n${COMMITTER}\ndata 7\ncatalog\n`,
    `M 100644 inline .gitattributes\ndata ${Buffer.byteLength(RESULTS_GITATTRIBUTES)}\n${RESULTS_GITATTRIBUTES}\n`,
  ];
  for (const [day, text] of catalogs) pieces.push(`M 100644 inline ".indexes/agentv-results.${day}.jsonl"\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  await fastImport(r, pieces);
  const rev = async (p) => (await git.runGit(['rev-parse', p], { gitDir: r.gitDir })).stdout.toString().trim();
  const mktree = async (lines) => (await git.runGit(['mktree'], { gitDir: r.gitDir, input: Buffer.from(lines.join('')) })).stdout.toString().trim();
  const env = { GIT_COMMITTER_DATE: '1767225600 +0000', GIT_AUTHOR_DATE: '1767225600 +0000' };
  const commitRef = async (ref, root) => {
    const commit = (await git.runGit(['commit-tree', root, '-p', genesis, '-m', 'seed'], { gitDir: r.gitDir, env })).stdout.toString().trim();
    await git.runGit(['update-ref', ref, commit], { gitDir: r.gitDir });
  };
  const results = await mktree([
    `100644 blob ${await rev('refs/bench/catalog:.gitattributes')}\t.gitattributes\n`,
    `040000 tree ${await rev('refs/bench/catalog:.indexes')}\t.indexes\n`,
    ...dirs.map((d) => `040000 tree ${trees.light}\t${d}\n`),
  ]);
  await commitRef(RESULTS_REF, results);
  if (trees.heavy) await commitRef(ARTIFACTS_REF, await mktree(dirs.map((d) => `040000 tree ${trees.heavy}\t${d}\n`)));
  for (const ref of ['refs/bench/catalog', 'refs/bench/template']) await git.runGit(['update-ref', '-d', ref], { gitDir: r.gitDir });
  return { results: await git.resolveRef(r, RESULTS_REF), catalogDays: catalogs.size };
}
