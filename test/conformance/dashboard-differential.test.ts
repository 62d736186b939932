/**
 * AgentV is the oracle: the same runs published once by AgentV's own `auto_push` and once by our
 * `publish --push`, onto two bare remotes, must look the same in AgentV's Dashboard. A viewer
 * project per remote runs `agentv serve`, and every endpoint its UI calls (serve.ts: runs, run
 * detail, suites, categories, evals/:test, transcript, trace-session, files and the content of
 * each kind of file, tags, experiments, targets, compare, index, remote status) is compared field
 * by field.
 *
 * The runs: the sample project (two targets), and one with several samples per test
 * (`evaluate_options.repeat`) where one of the two targets fails to execute. Besides the
 * Dashboard, the branches themselves: every path, mode and blob under each run is the same on
 * both remotes, and `pull --with-artifacts` gives back each workspace byte for byte.
 */
import { performance } from 'node:perf_hooks';
import { appendFile, cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  agentvEval,
  configureResults,
  describeWithAgentV,
  makeSampleProject,
  projectWithRemote,
  startAgentVServe,
  type AgentVServer,
} from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';
import { mapLimit } from '../../src/util/map-limit.js';
import { launchChromium } from '../helpers/browser.js';

const BRANCH = 'agentv/results/v1';

/**
 * Fields that differ between two publishes of the same run for reasons that have nothing to do
 * with the run: when each server synced, and AgentV's sync bookkeeping of each viewer clone.
 * Every other field of every response must be equal. The viewer projects' own directories are
 * replaced by `<project>` before comparing (each server reports where its clone is).
 */
const INHERENT_FIELDS = new Set(['last_synced_at', 'generated_at', 'commit_sha', 'head_sha', 'upstream_sha', 'local_sha', 'remote_sha']);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Paths (a.b[3].c) where two JSON values differ, ignoring INHERENT_FIELDS. */
function differences(a: Json, b: Json, at = ''): string[] {
  if (a === b) return [];
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = a.length === b.length ? [] : [`${at}.length: ${a.length} vs ${b.length}`];
    for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(...differences(a[i]!, b[i]!, `${at}[${i}]`));
    return out;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: string[] = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (INHERENT_FIELDS.has(k)) continue;
      if (!(k in a) || !(k in b)) out.push(`${at}.${k}: only on ${k in a ? 'AgentV' : 'ours'}`);
      else out.push(...differences(a[k]!, b[k]!, `${at}.${k}`));
    }
    return out;
  }
  return [`${at}: ${JSON.stringify(a)?.slice(0, 160)} vs ${JSON.stringify(b)?.slice(0, 160)}`];
}

function normalized(value: Json, project: string): Json {
  if (typeof value === 'string') return value.split(project).join('<project>');
  if (Array.isArray(value)) return value.map((v) => normalized(v, project));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalized(v, project)]));
  return value;
}

interface Viewer {
  project: string;
  server: AgentVServer;
}

/**
 * A fresh project that reads `remote`'s results branch, and `agentv serve` on it with a HOME of its
 * own. AgentV 5.x copies each run it opens into the checkout's root and, on every request, runs `git
 * status --untracked-files=all` there and one `git show` per untracked file (docs/agentv.md): the
 * viewer lists those copies (`/<run_id>/`) in `.git/info/exclude`, as export-both-dashboards does,
 * so a request costs the same at the end of the crawl as at its start. Both viewers get the same
 * lines; that the copies' bytes are the branch's is the first test's blob-for-blob comparison.
 */
async function viewer(remote: string, runIds: string[]): Promise<Viewer> {
  const project = await makeSampleProject();
  await configureResults(project, false);
  await git(project, ['remote', 'add', 'origin', remote]);
  await git(project, ['fetch', '-q', 'origin']);
  await appendFile(join(project, '.git', 'info', 'exclude'), runIds.map((id) => `/${id}/\n`).join(''));
  const server = await startAgentVServe(project, [], { home: await makeTempDir('agentv-viewer-home') });
  return { project, server };
}

/** Every file under `dir`, relative, with its bytes and executable bit. */
async function snapshot(dir: string, rel = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) for (const [k, v] of await snapshot(dir, child)) out.set(k, v);
    else {
      const abs = join(dir, child);
      const mode = (await stat(abs)).mode & 0o111 ? 'x' : '-';
      out.set(child, `${mode}:${(await readFile(abs)).toString('base64')}`);
    }
  }
  return out;
}

/** What the crawl opened of one run: file names fetched, kinds of eval opened, their targets; every target of the run. */
interface Coverage {
  fileNames: number;
  kinds: number;
  opened: string[];
  targets: string[];
}

/** Every response the Dashboard's UI would fetch, in one fixed order, by request path. */
async function crawl(v: Viewer): Promise<Map<string, { status: number; body: Json }> & { coverage: Map<string, Coverage> }> {
  const out = new Map<string, { status: number; body: Json }>();
  /** Per run: the files whose content was fetched (one of each kind), the kinds of eval crawled, its targets. */
  const coverage = new Map<string, Coverage>();
  /** Kinds of eval and of file already opened in an earlier run: a later run opens only what is new. */
  const seenKinds = new Set<string>();
  /** Requests and their wall time per endpoint kind: printed, so a slow crawl says where its time went. */
  const timing = new Map<string, { n: number; ms: number }>();
  const seenNames = new Set<string>();
  const get = async (path: string): Promise<Json> => {
    const started = performance.now();
    const res = await fetch(`${v.server.url}${path}`);
    const text = await res.text();
    let body: Json;
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = text;
    }
    body = normalized(body, v.project);
    out.set(path, { status: res.status, body });
    const kind = path
      .replace(/\?.*/, '')
      .replace(/\/api\/runs\/[^/]+/, '/api/runs/:run')
      .replace(/\/evals\/[^/]+/, '/evals/:test')
      .replace(/\/files\/.+/, '/files/:path');
    const t = timing.get(kind) ?? { n: 0, ms: 0 };
    timing.set(kind, { n: t.n + 1, ms: t.ms + performance.now() - started });
    return body;
  };
  const runs = ((await get('/api/runs')) as { runs: { filename: string }[] }).runs;
  for (const run of [...runs].sort((a, b) => (a.filename < b.filename ? -1 : 1))) {
    const r = encodeURIComponent(run.filename);
    const detail = (await get(`/api/runs/${r}`)) as { results?: { testId: string; result_dir?: string }[] };
    await get(`/api/runs/${r}/suites`);
    const cats = (await get(`/api/runs/${r}/categories`)) as { categories?: { name: string }[] };
    for (const c of cats.categories ?? []) await get(`/api/runs/${r}/categories/${encodeURIComponent(c.name)}/suites`);
    // Every eval's figures are in the run detail above. Each kind of eval (its target, execution
    // status, pass or fail, and a second sample of a test) gets its own detail, transcript, file
    // tree and trace session once in the crawl, in the first run that has it; and each kind of
    // file the evals hold (by extension) gets one file's content fetched. The first test of this suite shows every run's
    // tree is the same blob for blob on both branches, so another eval of the same kind goes
    // through the same code paths over the same kind of bytes; AgentV answers each request with
    // git processes of its own, and fetching every file of every eval took minutes.
    const results = (detail.results ?? []) as (Record<string, Json> & { testId: string; result_dir?: string })[];
    const kinds = new Map<string, number>();
    const samples = new Map<string, number>();
    results.forEach((res, i) => {
      const sample = samples.get(res.testId) ?? 0;
      samples.set(res.testId, sample + 1);
      const passed = typeof res.score === 'number' ? res.score >= 1 : null;
      const kind = JSON.stringify([res.target ?? null, res.executionStatus ?? res.execution_status ?? null, passed, Math.min(sample, 1)]);
      if (!kinds.has(kind) && !seenKinds.has(kind)) kinds.set(kind, i);
    });
    for (const k of kinds.keys()) seenKinds.add(k);
    const picked = [...kinds.values()];
    const query = (res: { result_dir?: string }) => (res.result_dir ? `?result_dir=${encodeURIComponent(res.result_dir)}` : '');
    const evalBase = (res: { testId: string }) => `/api/runs/${r}/evals/${encodeURIComponent(res.testId)}`;
    const trees = await mapLimit(picked, 4, async (i) => {
      const res = results[i]!;
      const q = query(res);
      await get(`${evalBase(res)}${q}`);
      await get(`${evalBase(res)}/transcript${q}`);
      await get(`${evalBase(res)}/trace-session${q}`);
      return filePaths(await get(`${evalBase(res)}/files${q}`));
    });
    const named = new Set<string>();
    const contents: string[] = [];
    picked.forEach((i, k) => {
      for (const path of trees[k] ?? []) {
        const name = path.split('/').pop()!;
        // A file's kind is its extension (.md, .json, .jsonl, .txt, .yaml): the content endpoint
        // answers each kind its own way; the bytes themselves are the blobs the first test compared.
        const kind = /\.[^.]+$/.exec(name)?.[0] ?? name;
        if (seenNames.has(kind)) continue;
        named.add(name);
        seenNames.add(kind);
        contents.push(`${evalBase(results[i]!)}/files/${path.split('/').map(encodeURIComponent).join('/')}${query(results[i]!)}`);
      }
    });
    coverage.set(run.filename, {
      fileNames: named.size,
      kinds: picked.length,
      opened: picked.map((i) => String(results[i]!.target)),
      targets: results.map((x) => String(x.target)),
    });
    await mapLimit(contents, 4, (path) => get(path));
  }
  for (const p of ['/api/index', '/api/tags', '/api/experiments', '/api/targets', '/api/compare', '/api/remote/status']) await get(p);
  console.log(`crawl of ${v.project.split('/').pop()}: ${[...timing].map(([k, t]) => `${k} ${t.n}x ${Math.round(t.ms)} ms`).join('; ')}`);
  // In one order whatever order the requests finished in.
  return Object.assign(new Map([...out].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))), { coverage });
}

/** The file paths of a `/files` tree (nodes of type file, at any depth). */
function filePaths(tree: Json): string[] {
  const out: string[] = [];
  const walk = (n: Json) => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object') {
      if (n.type === 'file' && typeof n.path === 'string') out.push(n.path);
      for (const v of Object.values(n)) if (typeof v === 'object') walk(v);
    }
  };
  walk(tree);
  return [...new Set(out)];
}

describeWithAgentV("AgentV's Dashboard shows runs we publish exactly as runs its own auto_push publishes", () => {
  isolateGitForSuite();
  const viewers: Viewer[] = [];
  let theirs: { project: string; remote: string };
  let ours: { project: string; remote: string };
  const runDirs: string[] = [];
  const runIds = () => runDirs.map((d) => d.split('/').pop()!);

  beforeAll(async () => {
    theirs = await projectWithRemote(true);
    ours = await projectWithRemote(false);
    // A target that cannot run: its rows are execution errors.
    await writeFile(
      join(theirs.project, '.agentv', 'providers.yaml'),
      `${(await readFile(join(theirs.project, '.agentv', 'providers.yaml'), 'utf8')).trimEnd()}\n- id: cli\n  label: broken-agent\n  command: bash -c 'echo boom >&2; exit 3'\n`,
    );
    runDirs.push(await agentvEval(theirs.project, { experiment: 'demo' }));
    // Several samples per test, one target of which fails to execute.
    const evalFile = join(theirs.project, 'evals', 'demo.eval.yaml');
    await writeFile(evalFile, `${(await readFile(evalFile, 'utf8')).trimEnd()}\nevaluate_options:\n  repeat: 2\n`);
    runDirs.push(
      await agentvEval(theirs.project, { experiment: 'errors-and-samples', extraArgs: ['--provider', 'steady-agent', '--provider', 'broken-agent'] }),
    );
    // The same workspaces, published by us onto the other remote.
    for (const dir of runDirs) {
      const copy = join(ours.project, '.agentv', 'results', dir.split('/').pop()!);
      await mkdir(join(ours.project, '.agentv', 'results'), { recursive: true });
      await cp(dir, copy, { recursive: true });
      const pub = await cli(['publish', copy, '--push', '--json'], ours.project);
      expect(pub.code, pub.stderr).toBe(0);
    }
  }, 600_000);

  afterAll(async () => {
    for (const v of viewers) await v.server.stop();
  });

  it('each run has the same paths, modes and blobs on both results branches, and nothing on the artifacts branch that AgentV does not put there', async () => {
    for (const dir of runDirs) {
      const id = dir.split('/').pop()!;
      const tree = async (remote: string, ref: string) => git(remote, ['ls-tree', '-r', ref, '--', `${id}/`]).catch(() => '');
      const agentvTree = await tree(theirs.remote, BRANCH);
      expect(agentvTree.split('\n').length).toBeGreaterThan(10);
      expect(await tree(ours.remote, BRANCH)).toBe(agentvTree);
      expect(await tree(ours.remote, 'agentv/artifacts/v1')).toBe(await tree(theirs.remote, 'agentv/artifacts/v1'));
    }
    // What we add beside AgentV's runs: our catalog under .indexes/ and our lines in .gitattributes.
    const paths = async (remote: string) => new Set((await git(remote, ['ls-tree', '-r', '--name-only', BRANCH])).split('\n').filter(Boolean));
    const agentvPaths = await paths(theirs.remote);
    const extra = [...(await paths(ours.remote))].filter((p) => !agentvPaths.has(p));
    expect(
      extra.every((p) => p.startsWith('.indexes/agentv-results.')),
      extra.join(', '),
    ).toBe(true);
  });

  it('pull --with-artifacts gives back each workspace byte for byte', async () => {
    for (const dir of runDirs) {
      const id = dir.split('/').pop()!;
      const out = join(await makeTempDir('agentv-pulled'), id);
      const r = await cli(['pull', id, '--with-artifacts', '--out', out], ours.project);
      expect(r.code, r.stderr).toBe(0);
      const want = await snapshot(dir);
      const got = await snapshot(out);
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [k, v] of want) expect(got.get(k), k).toBe(v);
    }
  });

  it('every Dashboard endpoint answers the same, field by field, for both publishes', async () => {
    viewers.push(await viewer(theirs.remote, runIds()), await viewer(ours.remote, runIds()));
    const [a, b] = await Promise.all([crawl(viewers[0]!), crawl(viewers[1]!)]);
    expect([...b.keys()]).toEqual([...a.keys()]);
    // The crawl reached every part of the UI: a run's evals, their transcripts and their files.
    const paths = [...a.keys()];
    expect(a.coverage.size).toBe(runDirs.length);
    for (const [run, c] of a.coverage) {
      const at = `/api/runs/${encodeURIComponent(run)}/evals/`;
      const ofRun = paths.filter((p) => p.startsWith(at));
      // The kinds of eval this run added to the crawl were opened: transcript, trace, files.
      expect(ofRun.filter((p) => /\/transcript(\?|$)/.test(p)).length, run).toBe(c.kinds);
      expect(ofRun.filter((p) => /\/trace-session(\?|$)/.test(p)).length, run).toBe(c.kinds);
      const fetched = new Set(ofRun.filter((p) => /\/files\/.+/.test(p)).map((p) => p.replace(/\?.*/, '').split('/').pop()));
      expect(fetched.size, run).toBe(c.fileNames);
    }
    const all = [...a.coverage.values()];
    // Each run added kinds; every target of every run (steady, flaky, broken) had an eval opened,
    // and each sample of a repeated test; the evals hold several kinds of file (answer, grading,
    // timing, transcript, …), and the content of each kind was fetched.
    expect(all.every((c) => c.kinds > 0)).toBe(true);
    const opened = new Set(all.flatMap((c) => c.opened));
    expect([...new Set(all.flatMap((c) => c.targets))].filter((t) => !opened.has(t))).toEqual([]);
    expect(opened.size).toBeGreaterThanOrEqual(3);
    expect(all.reduce((n, c) => n + c.fileNames, 0)).toBeGreaterThanOrEqual(4);
    const diffs: string[] = [];
    for (const [path, theirsRes] of a) {
      const oursRes = b.get(path)!;
      if (oursRes.status !== theirsRes.status) diffs.push(`${path}: status ${theirsRes.status} vs ${oursRes.status}`);
      for (const d of differences(theirsRes.body, oursRes.body)) diffs.push(`${path} ${d}`);
    }
    expect(diffs).toEqual([]);
    // The runs AgentV copied into each viewer are all excluded: no request paid a git show per file.
    for (const v of viewers) expect(await git(v.project, ['status', '--porcelain', '--untracked-files=all']), v.project).toBe('');
  }, 600_000);

  it("one eval's Transcript and Grading tabs render in AgentV's Dashboard (headless Chromium) as they do for AgentV's own publish", async () => {
    if (viewers.length === 0) viewers.push(await viewer(theirs.remote, runIds()), await viewer(ours.remote, runIds()));
    const runId = `remote::${runDirs[0]!.split('/').pop()}`;
    // The first eval of the sample run: its result directory from AgentV's own API.
    const detail = (await (await fetch(`${viewers[0]!.server.url}/api/runs/${encodeURIComponent(runId)}`)).json()) as {
      results: { testId: string; result_dir: string; scores: { name: string }[] }[];
    };
    const first = detail.results.find((r) => r.testId === 'says-42')!;
    const browser = await launchChromium();
    try {
      const tabs = async (v: Viewer): Promise<Record<string, string>> => {
        const page = await browser.newPage();
        await page.goto(
          `${v.server.url}/evals/${encodeURIComponent(runId)}/${encodeURIComponent(first.testId)}?result_dir=${encodeURIComponent(first.result_dir)}`,
        );
        const out: Record<string, string> = {};
        for (const tab of ['Transcript', 'Grading']) {
          await page.getByRole('button', { name: tab, exact: true }).first().click();
          // Rendered: the transcript's timeline, or the grading's aggregate score.
          await page
            .getByText(tab === 'Transcript' ? 'Transcript timeline' : 'Aggregate score')
            .first()
            .waitFor({ timeout: 60_000 });
          out[tab] = ((await page.locator('main').textContent()) ?? '').split(v.project).join('<project>');
        }
        await page.close();
        return out;
      };
      const [a, b] = [await tabs(viewers[0]!), await tabs(viewers[1]!)];
      expect(b.Transcript).not.toMatch(/could not be parsed/i);
      expect(b.Transcript).toContain('The answer is 42.');
      expect((b.Grading ?? '').toLowerCase()).toContain(first.scores[0]!.name.toLowerCase());
      expect(b).toEqual(a);
    } finally {
      await browser.close();
    }
  }, 300_000);
});
