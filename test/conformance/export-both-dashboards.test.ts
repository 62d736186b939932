/**
 * Real AgentV result files, exported and published by us, opened in full by both AgentV lines
 * (issue 39 item 1): once to a branch of AgentV 5.x's layout, once to a branch of 4.42's
 * (`layout: stable`). For each run, every Dashboard endpoint its run view and its tests' views call
 * answers without error; each test's answer and input texts and its graders' names are what the
 * results file says; both `results validate`s find 0 errors in the published run; `agentv results
 * show` prints the input; and one test's answer and transcript render in both Dashboards (headless
 * Chromium; screenshots written to $AGENTV_SCREENSHOT_DIR when set, to look at).
 *
 * What a request costs AgentV's serve (strace of its git processes, issue 39): 5.x runs `git
 * status --untracked-files=all` in the viewing checkout and then one `git show` per untracked file
 * it finds; the runs its Dashboard opened are copied into that checkout (`path: .`), so each
 * request spawned one git per file of every run opened so far (0.7 CPU-s a request after 3 runs,
 * about 2 by the end of a crawl). The viewer here ignores those copies in `.git/info/exclude`, as a
 * user whose `git status` they clutter would: 0.1 CPU-s a request, flat. 4.42.4 runs two `git
 * fetch`es of origin on every request (0.35 CPU-s) and, to list runs, reads the whole `runs/` tree
 * with two more git processes per run (3 CPU-s for 22 runs); one repository per line holding the
 * file's runs, one serve per client for the whole file.
 *
 * Even so, every fixture on both lines is well over the 60 CPU-seconds this file may cost npm test
 * (benchmark-tooling, assert-set and trace-analysis measured 82): npm test crawls three small ones
 * that carry what the check is about (answers, inputs and transcripts: benchmark-tooling; grader
 * names: assert-set, weighted-graders), with one test's view per run and one file of each kind:
 * 43 CPU-seconds alone (user+sys, 46 s wall, on a quiet host; 62 while another crawl ran beside it). The full
 * crawl of every fixture is this same file with AGENTV_EXPORT_DASHBOARDS=full, run by
 * `npm run bench -- export-both-dashboards` (its report: runs, requests, errors, answers, inputs and
 * graders checked per line).
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  AGENTV_STABLE_BIN,
  describeWithAgentV,
  describeWithAgentVStable,
  HAS_AGENTV_STABLE,
  makeSampleProject,
  makeStableSampleProject,
  runAgentV,
  runAgentVStable,
  startAgentVServe,
  type AgentVServer,
} from '../helpers/agentv-client.js';
import { launchChromium } from '../helpers/browser.js';
import { fixtureFiles, HAS_FIXTURES, describeWithFixtures } from '../helpers/fixtures.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';
type Line = '5.x' | '4.42';
const FULL = process.env.AGENTV_EXPORT_DASHBOARDS === 'full';
const SUBSET = ['benchmark-tooling', 'assert-set', 'weighted-graders'];
const FILES = fixtureFiles().filter((f) => FULL || SUBSET.some((n) => f.includes(`/${n}--`)));
/** What the crawl counted, per line: written to $AGENTV_EXPORT_DASHBOARDS_REPORT when set. */
const counted: Record<string, unknown> = {};
/** Every server started, stopped after the file even when a setup did not finish. */
const servers: AgentVServer[] = [];
async function startServer(viewer: string, opts: { home: string; bin?: string }): Promise<AgentVServer> {
  const server = await startAgentVServe(viewer, [], opts);
  servers.push(server);
  return server;
}

interface FixtureRow {
  test_id: string;
  testId?: string;
  target: string;
  answer?: string;
  output?: string | { role: string; content: unknown }[];
  input?: string | { role: string; content: unknown }[];
  scores?: FixtureGrader[];
  assertions?: { text: string }[];
}

interface FixtureGrader {
  name: string;
  type?: string;
  scores?: FixtureGrader[];
}

/** A grader's own name, then its members' (an assert-set's), each a grader the Dashboard names. */
function graderNames(g: FixtureGrader): string[] {
  return [g.name, ...(g.scores ?? []).flatMap(graderNames)];
}

function answerOf(r: FixtureRow): string | null {
  const a = r.answer ?? r.output;
  if (typeof a === 'string') return a.trim() === '' ? null : a.trim();
  if (Array.isArray(a)) {
    const last = [...a].reverse().find((m) => m.role === 'assistant');
    return typeof last?.content === 'string' && last.content.trim() !== '' ? last.content.trim() : null;
  }
  return null;
}

function inputOf(r: FixtureRow): string | null {
  if (typeof r.input === 'string') return r.input.trim() || null;
  if (Array.isArray(r.input))
    return (
      r.input
        .map((m) => String(m.content ?? ''))
        .join('\n')
        .trim() || null
    );
  return null;
}

async function fixtureRows(file: string): Promise<FixtureRow[]> {
  return (
    (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as FixtureRow)
      // A few result files (camel-replay) spell the row's keys in camelCase.
      .map((r) => ({ ...r, test_id: r.test_id ?? r.testId ?? '' }))
  );
}

interface Published {
  fixture: string;
  /** The run's directory on the branch. */
  path: string;
  /** The run's id in AgentV's Dashboard. */
  runId: string;
  rows: FixtureRow[];
}

interface LineSetup {
  line: Line;
  remote: string;
  viewer: string;
  server: AgentVServer | null;
  runs: Published[];
}

let requests = 0;
async function get(url: string): Promise<{ status: number; body: unknown; text: string }> {
  requests++;
  const res = await fetch(url);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: a file's content
  }
  return { status: res.status, body, text };
}

interface DashResult {
  testId: string;
  target?: string;
  result_dir?: string;
  output?: unknown;
  input?: unknown;
  scores?: { name: string }[];
}

const textOf = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) ? v.map((m) => String((m as { content?: unknown }).content ?? '')).join('\n') : '';

async function setUp(line: Line): Promise<LineSetup> {
  const base = await makeTempDir(`export-both-${line}`);
  const remote = join(base, 'results.git');
  await git(base, ['init', '-q', '--bare', remote]);
  const publisher = line === '5.x' ? await makeSampleProject(join(base, 'publisher')) : await makeStableSampleProject(join(base, 'publisher'));
  await git(publisher, ['remote', 'add', 'origin', remote]);
  const env = line === '4.42' ? { AGENTV_RESULTS_LAYOUT: 'stable' } : {};
  const runs: Published[] = [];
  for (const file of FILES) {
    const r = await cli(['publish', file, '--push', '--json'], publisher, { env });
    expect(r.code, `${file}\n${r.stderr}`).toBe(0);
    const out = JSON.parse(r.stdout) as { location: { path: string; experiment: string; run_id: string }; push: { landed: boolean } };
    expect(out.push.landed, file).toBe(true);
    const runId = line === '5.x' ? `remote::${out.location.path}` : `remote::${out.location.run_id}`;
    runs.push({ fixture: file, path: out.location.path, runId, rows: await fixtureRows(file) });
  }
  const viewer = line === '5.x' ? await makeSampleProject(join(base, 'viewer')) : await makeStableSampleProject(join(base, 'viewer'));
  const cfg = join(viewer, '.agentv', 'config.yaml');
  let existing = '';
  try {
    existing = (await readFile(cfg, 'utf8')).trimEnd();
  } catch {
    // the stable sample has no config.yaml: written below
  }
  const key = line === '5.x' ? 'path' : 'repo_path';
  await writeFile(cfg, `${existing}\nresults:\n  ${key}: .\n  branch: ${BRANCH}\n  auto_push: false\n`);
  await git(viewer, ['remote', 'add', 'origin', remote]);
  await git(viewer, ['fetch', '-q', 'origin']);
  // The copies AgentV 5.x's Dashboard makes of the runs it opens (at the checkout's root, `path: .`)
  // stay out of `git status`: each untracked file costs it one `git show` on every request.
  if (line === '5.x') await appendFile(join(viewer, '.git', 'info', 'exclude'), runs.map((r) => `/${r.path}/\n`).join(''));
  // 4.42's Dashboard lists the local branch.
  if (line === '4.42') await git(viewer, ['branch', BRANCH, `origin/${BRANCH}`]);
  const server = await startServer(viewer, {
    home: await makeTempDir(`export-both-home-${line}`),
    bin: line === '4.42' ? AGENTV_STABLE_BIN : undefined,
  });
  return { line, remote, viewer, server, runs };
}

/** The published run as a directory: the results branch's files, and the artifacts branch's (5.x) on top, as a pull with its artifacts gives it. */
async function checkout(s: LineSetup, run: Published): Promise<string> {
  const dir = join(await makeTempDir('export-both-run'), 'run');
  await mkdir(dir);
  for (const ref of line5(s) ? [`origin/${BRANCH}`, 'origin/agentv/artifacts/v1'] : [`origin/${BRANCH}`]) {
    const listed = await git(s.viewer, ['ls-tree', '-r', '--name-only', ref, `${run.path}/`]);
    for (const p of listed.split('\n').filter(Boolean)) {
      const rel = p.slice(run.path.length + 1);
      await mkdir(join(dir, rel, '..'), { recursive: true });
      await writeFile(join(dir, rel), await gitBlob(s.viewer, `${ref}:${p}`));
    }
  }
  return dir;
}

const line5 = (s: LineSetup) => s.line === '5.x';

async function gitBlob(cwd: string, spec: string): Promise<Buffer> {
  const { execFileSync } = await import('node:child_process');
  return execFileSync('git', ['cat-file', 'blob', spec], { cwd, maxBuffer: 64 << 20 });
}

function flatFiles(tree: unknown): string[] {
  const out: string[] = [];
  const walk = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes as { path?: string; type?: string; children?: unknown }[]) {
      if (n.type === 'file' && typeof n.path === 'string') out.push(n.path);
      walk(n.children);
    }
  };
  walk(tree);
  return out;
}

(HAS_FIXTURES ? (HAS_AGENTV_STABLE ? describeWithAgentV : describeWithAgentVStable) : describeWithFixtures)(
  'our exports of every real result file open in full in both AgentV Dashboards',
  () => {
    isolateGitForSuite();
    const setups = new Map<Line, LineSetup>();

    beforeAll(
      async () => {
        for (const line of ['5.x', '4.42'] as const) setups.set(line, await setUp(line));
      },
      FULL ? 3_600_000 : 900_000,
    );

    afterAll(async () => {
      for (const server of servers) await server.stop();
      const report = process.env.AGENTV_EXPORT_DASHBOARDS_REPORT;
      if (report) await writeFile(report, JSON.stringify({ fixtures: FILES.length, ...counted }));
    });

    for (const line of ['5.x', '4.42'] as const) {
      it(
        `${line}: every Dashboard endpoint of every run answers; answers, inputs and grader names are the results file's`,
        async () => {
          const s = setups.get(line)!;
          const url = s.server!.url;
          const listed = (await get(`${url}/api/runs`)).body as { runs: { filename: string }[] };
          const names = new Set(listed.runs.map((r) => r.filename));
          let answers = 0;
          let inputs = 0;
          let graders = 0;
          const failures: string[] = [];
          const unnamed: string[] = [];
          const expectOk = (what: string, res: { status: number; body: unknown }) => {
            const err = (res.body as { error?: unknown } | null)?.error;
            if (res.status !== 200 || err !== undefined) failures.push(`${what}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          };
          for (const run of s.runs) {
            expect(names.has(run.runId), `${run.runId} in ${[...names].join(', ')}`).toBe(true);
            const r = encodeURIComponent(run.runId);
            const detail = await get(`${url}/api/runs/${r}`);
            expectOk(`${run.runId} detail`, detail);
            for (const ep of ['suites', 'categories']) expectOk(`${run.runId} ${ep}`, await get(`${url}/api/runs/${r}/${ep}`));
            const results = ((detail.body as { results?: DashResult[] }).results ?? []) as DashResult[];
            expect(results.length, run.fixture).toBeGreaterThan(0);
            let firstFiles = true;
            for (const res of results) {
              const want = run.rows.filter((f) => f.test_id === res.testId && (res.target === undefined || f.target === res.target));
              expect(want.length, `${run.fixture} ${res.testId}`).toBeGreaterThan(0);
              const answer = want.map(answerOf).find((a) => a !== null);
              if (answer) {
                expect(textOf(res.output).trim(), `${run.fixture} ${res.testId}: the answer`).toBe(answer);
                answers++;
              }
              const input = want.map(inputOf).find((i) => i !== null);
              if (input) {
                expect(textOf(res.input).trim(), `${run.fixture} ${res.testId}: the input`).toBe(input);
                inputs++;
              }
              const q = res.result_dir ? `?result_dir=${encodeURIComponent(res.result_dir)}` : '';
              const e = `${url}/api/runs/${r}/evals/${encodeURIComponent(res.testId)}`;
              // A test's view (eval, files, transcript): every test in the full crawl, a run's first in npm test.
              const viewed = FULL || firstFiles;
              const evalDetail = viewed ? await get(`${e}${q}`) : { status: 200, body: null, text: '' };
              expectOk(`${run.runId} ${res.testId} eval`, evalDetail);
              // Each grader by its own name in the test's scores, as AgentV lists the graders of a run it wrote
              // itself, whatever the row's assertions are; in 5.x an assert-set's members by theirs beneath it
              // (4.42's run detail lists the top-level graders only, as the index row's scores carry them).
              const shown = (res.scores ?? []).map((x) => x.name);
              const tree = JSON.stringify(res.scores ?? []);
              for (const g of want.flatMap((f) => f.scores ?? [])) {
                if (!shown.includes(g.name)) unnamed.push(`${run.fixture} ${res.testId}: ${g.name} (${g.type}) among ${JSON.stringify(shown)}`);
                for (const m of line === '5.x' ? graderNames(g).slice(1) : [])
                  if (!tree.includes(`"name":${JSON.stringify(m)}`)) unnamed.push(`${run.fixture} ${res.testId}: ${g.name}'s member ${m}`);
                graders++;
              }
              if (!viewed) continue;
              const files = await get(`${e}/files${q}`);
              expectOk(`${run.runId} ${res.testId} files`, files);
              if (line === '5.x') {
                for (const ep of ['transcript', 'trace-session']) expectOk(`${run.runId} ${res.testId} ${ep}`, await get(`${e}/${ep}${q}`));
              }
              // Every file the first test of a run lists opens (the answer among them when it has one).
              if (firstFiles) {
                firstFiles = false;
                const paths = flatFiles((files.body as { files?: unknown }).files);
                expect(paths.length, `${run.runId} ${res.testId}: files`).toBeGreaterThan(0);
                if (answer) expect(paths.some((p) => p.endsWith('outputs/answer.md'))).toBe(true);
                // One file of each kind (by extension) in npm test: each request is a whole check of AgentV's.
                const kinds = new Set<string>();
                for (const p of paths) {
                  const kind = p.slice(p.lastIndexOf('.'));
                  if (!FULL && kinds.has(kind) && !p.endsWith('outputs/answer.md')) continue;
                  kinds.add(kind);
                  const got = await get(`${e}/files/${p.split('/').map(encodeURIComponent).join('/')}${q}`);
                  expectOk(`${run.runId} ${res.testId} files/${p}`, got);
                }
              }
            }
          }
          counted[line] = { runs: s.runs.length, requests, answers, inputs, graders, failures, unnamed };
          requests = 0;
          expect(failures).toEqual([]);
          // Every grader by name in both Dashboards, assert-sets, weighted graders and trace-analysis included.
          expect(unnamed).toEqual([]);
          // The result files carry answers (benchmark-tooling, trace-analysis), inputs and graders.
          expect(answers).toBeGreaterThanOrEqual(9);
          expect(inputs).toBeGreaterThanOrEqual(9);
          expect(graders).toBeGreaterThanOrEqual(FULL ? 50 : 10);
        },
        FULL ? 3_600_000 : 600_000,
      );

      it(
        `${line}: its results validate finds 0 errors in every published run, and its summary reads it`,
        async () => {
          const s = setups.get(line)!;
          const run = line === '5.x' ? runAgentV : runAgentVStable;
          const errors: string[] = [];
          for (const p of s.runs) {
            const dir = await checkout(s, p);
            const v = await run(['results', 'validate', dir], { cwd: dir });
            const lines = `${v.stdout}\n${v.stderr}`.split('\n').filter((l) => /ERROR/.test(l));
            if (v.code !== 0 || lines.length > 0) errors.push(`${p.fixture}: exit ${v.code}\n${v.stdout}\n${v.stderr}`);
            // The summary on a few runs (each call is a client start): answers, traces, weighted graders; in npm
            // test one run on 4.42 (whose summary crashed on our exports before).
            if (
              !(FULL ? ['benchmark-tooling', 'trace-analysis', 'weighted-graders'] : line === '4.42' ? ['benchmark-tooling'] : []).some((n) =>
                p.fixture.includes(n),
              )
            )
              continue;
            const summary = await run(['results', 'summary', dir], { cwd: dir });
            expect(summary.code, `${p.fixture}: summary\n${summary.stderr}`).toBe(0);
            expect((JSON.parse(summary.stdout) as { total: number }).total, p.fixture).toBeGreaterThan(0);
          }
          expect(errors).toEqual([]);
        },
        FULL ? 3_600_000 : 600_000,
      );
    }

    it('5.x: `agentv results show` prints the input and the answer of a published run', async () => {
      const s = setups.get('5.x')!;
      const p = s.runs.find((r) => r.fixture.includes('benchmark-tooling'))!;
      const dir = await checkout(s, p);
      const row = p.rows[0]!;
      const shown = await runAgentV(['results', 'show', dir, '--test-id', row.test_id], { cwd: dir });
      expect(shown.code, shown.stderr).toBe(0);
      const doc = JSON.parse(shown.stdout) as { input: string; response: string };
      expect(doc.input).not.toBe('(no input)');
      expect(doc.input).toContain(inputOf(row)!);
      expect(doc.response).not.toBe('(no output)');
    }, 120_000);

    it("one test's answer and transcript render in both Dashboards (headless Chromium)", async () => {
      const shots = process.env.AGENTV_SCREENSHOT_DIR;
      const browser = await launchChromium();
      try {
        for (const line of ['5.x', '4.42'] as const) {
          const s = setups.get(line)!;
          const p = s.runs.find((r) => r.fixture.includes('benchmark-tooling'))!;
          const detail = (await get(`${s.server!.url}/api/runs/${encodeURIComponent(p.runId)}`)).body as { results: DashResult[] };
          const res = detail.results.find((r) => textOf(r.output).trim() !== '')!;
          const answer = textOf(res.output).trim();
          const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
          const q = res.result_dir ? `?result_dir=${encodeURIComponent(res.result_dir)}` : '';
          await page.goto(`${s.server!.url}/evals/${encodeURIComponent(p.runId)}/${encodeURIComponent(res.testId)}${q}`);
          // Both Dashboards' Transcript tab: the final answer (from outputs/answer.md), then the transcript's messages.
          await page.getByRole('button', { name: 'Transcript', exact: true }).first().click();
          await page.getByText('Transcript timeline').first().waitFor({ timeout: 60_000 });
          await page.getByText(answer.slice(0, 40)).first().waitFor({ timeout: 60_000 });
          const main = (await page.locator('body').textContent()) ?? '';
          expect(main, line).toContain('Final answer');
          expect(main, line).toContain(answer);
          expect(main, line).toContain(inputOf(p.rows.find((r) => r.test_id === res.testId)!)!);
          expect(main, line).not.toMatch(/answer\.md is empty|Failed to load|File not found|could not be parsed/i);
          if (shots) await page.screenshot({ path: join(shots, `${line}-transcript.png`), fullPage: true });
          await page.close();
        }
      } finally {
        await browser.close();
      }
    }, 300_000);
  },
);
