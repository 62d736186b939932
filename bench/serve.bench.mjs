/**
 * `serve` figures:
 * - `GET /api/runs` (the Dashboard's listing: catalog + one page of tags) on a results branch of
 *   3,000 runs as a ratio of the same request on 10 runs (target ≤ 2x);
 * - the Dashboard in headless Chromium on the 3,000-run branch: first contentful paint (target
 *   < 1 s) and the time until the first run rows exist;
 * - AgentV's own Dashboard (`agentv serve`) on the same branch, when ../shared/agentv-client is
 *   present: its `GET /api/runs` and its page's first paint, as ratios of ours, with how many runs
 *   it listed.
 * Branches are seeded with one fast-import (bench/publish-lib.mjs seedRuns), pushed to a bare
 * remote and fetched, so the remote-tracking ref AgentV reads exists too.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstContentfulPaint, fmtMs, fmtRatio, median, ROOT } from './lib.mjs';
import { freshRepo, git, isolateGitEnv, makeWorkspace, seedRuns } from './publish-lib.mjs';
import { CHROMIUM_ARGS, chromiumExecutable } from '../scripts/chromium.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const REQUESTS = 15;
const LAUNCH = { executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS };
const AGENTV = join(ROOT, '../shared/agentv-client/agentv');

async function seededRepo(work, name, template, count) {
  const dir = await freshRepo(work, name);
  await seedRuns(dir, template, { count, days: Math.max(1, Math.ceil(count / 100)), experiment: 'bench' });
  const remote = join(work, `${name}-remote.git`);
  await git.runGit(['init', '-q', '--bare', remote]);
  await git.runGit(['remote', 'add', 'origin', remote], { cwd: dir });
  await git.runGit(
    ['push', '-q', 'origin', 'refs/heads/agentv/results/v1:refs/heads/agentv/results/v1', 'refs/heads/agentv/artifacts/v1:refs/heads/agentv/artifacts/v1'],
    { cwd: dir },
  );
  await git.runGit(['fetch', '-q', 'origin'], { cwd: dir });
  await mkdir(join(dir, '.agentv'), { recursive: true });
  await writeFile(join(dir, '.agentv', 'config.yaml'), 'results:\n  path: .\n  branch: agentv/results/v1\n');
  return dir;
}

async function timeRequests(url) {
  const ms = [];
  for (let i = 0; i < REQUESTS + 2; i++) {
    const t0 = performance.now();
    const res = await fetch(url);
    const body = await res.json();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    if (i >= 2) ms.push(performance.now() - t0);
    if (i === 0) timeRequests.last = body;
  }
  return median(ms);
}

async function pageFigures(url, rowSelector) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch(LAUNCH);
  const fcp = [];
  const rows = [];
  try {
    for (let i = 0; i < RUNS + 1; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const t0 = performance.now();
      await page.goto(url, { waitUntil: 'commit' });
      let rowsMs = null;
      if (rowSelector) {
        await page.locator(rowSelector).first().waitFor({ timeout: 60_000 });
        rowsMs = performance.now() - t0;
      } else await page.waitForLoadState('load');
      const paint = await page.evaluate(firstContentfulPaint);
      await context.close();
      if (i === 0) continue;
      fcp.push(paint);
      if (rowsMs !== null) rows.push(rowsMs);
    }
  } finally {
    await browser.close();
  }
  return { fcp: median(fcp), rows: rows.length ? median(rows) : null };
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startAgentV(dir, home) {
  const port = await freePort();
  const child = spawn(AGENTV, ['serve', '--single', '--read-only', '--dir', dir, '--port', String(port)], {
    cwd: dir,
    env: { ...process.env, HOME: home, NO_COLOR: '1', CI: '1' },
    stdio: 'ignore',
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/api/config`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    },
  };
}

export async function run() {
  isolateGitEnv();
  const { startServer } = await import(join(ROOT, 'dist/serve/index.js'));
  const work = await mkdtemp(join(tmpdir(), 'bench-serve-'));
  try {
    const template = await makeWorkspace(work, { rows: 6, seed: 3, turns: 1 });
    const small = await seededRepo(work, 'small', template, 10);
    const big = await seededRepo(work, 'big', template, 3000);
    const ours = { small: await startServer({ cwd: small }), big: await startServer({ cwd: big }) };
    let smallMs, bigMs, bigListed, page;
    try {
      smallMs = await timeRequests(`${ours.small.url}/api/runs`);
      bigMs = await timeRequests(`${ours.big.url}/api/runs`);
      bigListed = timeRequests.last.total;
      // Again, interleaved the other way round, so a noisy moment does not favour one side.
      const bigMs2 = await timeRequests(`${ours.big.url}/api/runs`);
      const smallMs2 = await timeRequests(`${ours.small.url}/api/runs`);
      smallMs = median([smallMs, smallMs2]);
      bigMs = median([bigMs, bigMs2]);
      page = await pageFigures(`${ours.big.url}/`, '#runs-body tr');
    } finally {
      await ours.small.close();
      await ours.big.close();
    }

    let agentv = null;
    if (existsSync(AGENTV)) {
      const home = await mkdtemp(join(tmpdir(), 'bench-agentv-home-'));
      const peer = await startAgentV(big, home);
      try {
        const ms = await timeRequests(`${peer.url}/api/runs`);
        const listed = (timeRequests.last.runs ?? []).length;
        const p = await pageFigures(`${peer.url}/`, null);
        agentv = { ms, listed, fcp: p.fcp };
      } finally {
        peer.stop();
        await rm(home, { recursive: true, force: true });
      }
    }

    const ratio = bigMs / smallMs;
    const rows = [
      `| \`GET /api/runs\`, 10 runs (baseline) | ${fmtMs(smallMs)} | 1.00x | |`,
      `| \`GET /api/runs\`, ${bigListed.toLocaleString('en-US')} runs (first page of 100 + facets) | ${fmtMs(bigMs)} | **${fmtRatio(ratio)}** | ≤ 2x ${ratio <= 2 ? '✓' : '✗'} |`,
      `| Dashboard, ${bigListed.toLocaleString('en-US')} runs: first contentful paint | ${fmtMs(page.fcp)} | | < 1 s ${page.fcp < 1000 ? '✓' : '✗'} |`,
      `| Dashboard, ${bigListed.toLocaleString('en-US')} runs: first run rows in the DOM (from navigation) | ${fmtMs(page.rows)} | | |`,
    ];
    if (agentv) {
      rows.push(
        `| AgentV \`agentv serve\`: \`GET /api/runs\` on the same branch (listed ${agentv.listed} runs) | ${fmtMs(agentv.ms)} | ${fmtRatio(agentv.ms / bigMs)} of ours | |`,
      );
      rows.push(`| AgentV Dashboard page: first contentful paint | ${fmtMs(agentv.fcp)} | ${fmtRatio(agentv.fcp / page.fcp)} of ours | |`);
    }
    const markdown = `## serve

The Dashboard API and page over a results branch seeded with one fast-import (6-test runs, 2 targets), pushed to a bare remote and fetched.
Request times are medians of ${REQUESTS} requests (after 2 warm-ups), measured twice in opposite orders; browser figures are medians of ${RUNS} fresh contexts after one warm-up.
${agentv ? `AgentV 5.3.1-next listed ${agentv.listed} of the ${bigListed.toLocaleString('en-US')} runs here: it reads runs at the branch root (this seeded branch still keeps them under \`runs/\`, the layout \`seedRuns\` writes), and it lists nothing at all once \`git ls-tree -r\` of the branch passes 1 MB, which a few thousand runs do in any layout. Its times are those of its listing attempt, not of rendering the same rows: read the ratios as "what a user waits for", not as like for like.` : 'The AgentV client was not present: no side-by-side figures.'}

| measure | median | ratio | target |
|---|---|---|---|
${rows.join('\n')}
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
