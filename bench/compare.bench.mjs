/**
 * `compare` and `trend` figures (fresh processes, median of BENCH_RUNS):
 * - `agentv-results compare a b --json` on two 20,000-row result manifests, as a ratio of the
 *   same command on 100 rows (how it scales) and of the real `agentv compare a b --json` on the
 *   same 20,000-row files (when ../shared/agentv-client is present);
 * - `agentv-results trend` over 30 local runs of 1,000 rows against 3 such runs;
 * - `agentv-results trend --published` over 30 published runs of 200 rows (their manifests read
 *   from the branch in one batch) against `trend` over the same 30 workspaces on disk.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const AGENTV = join(ROOT, '../shared/agentv-client/agentv');

function rowsText(n, seed, day, lift = 0) {
  let x = seed;
  const rnd = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const lines = [];
  for (let i = 0; i < n; i++)
    lines.push(
      JSON.stringify({
        test_id: `t-${i}`,
        target: 'm',
        suite: 's',
        timestamp: `2026-03-${String(day).padStart(2, '0')}T10:00:00.000Z`,
        score: Math.min(1, Math.round(rnd() * 100) / 100 + (i % 3 === 0 ? lift : 0)),
      }),
    );
  return lines.join('\n') + '\n';
}

async function manifest(dir, n, seed, day = 1, lift = 0) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.jsonl'), rowsText(n, seed, day, lift));
  return join(dir, 'index.jsonl');
}

async function timed(cmd, args, opts) {
  const ms = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const r = await runMeasured(cmd, args, opts);
    if (i > 0) ms.push(r.ms);
  }
  return median(ms);
}

export async function run() {
  const work = await mkdtemp(join(tmpdir(), 'bench-compare-'));
  const home = join(work, 'home');
  await mkdir(home);
  try {
    // The candidate is the baseline with every third score lifted: no regression, so both tools exit 0.
    const smallA = await manifest(join(work, 's-a'), 100, 1);
    const smallB = await manifest(join(work, 's-b'), 100, 1, 1, 0.2);
    const bigA = await manifest(join(work, 'b-a'), 20_000, 1);
    const bigB = await manifest(join(work, 'b-b'), 20_000, 1, 1, 0.2);
    const small = await timed(process.execPath, [CLI, 'compare', smallA, smallB, '--json'], { cwd: work });
    const big = await timed(process.execPath, [CLI, 'compare', bigA, bigB, '--json'], { cwd: work });
    let agentv = null;
    if (existsSync(AGENTV)) agentv = await timed(AGENTV, ['compare', bigA, bigB, '--json'], { cwd: work, env: { ...process.env, HOME: home, NO_COLOR: '1' } });

    const project = join(work, 'project');
    for (let i = 0; i < 30; i++) await manifest(join(project, '.agentv', 'results', `run-${String(i).padStart(2, '0')}`), 1000, 100 + i, 1 + (i % 28));
    const few = join(work, 'few');
    for (let i = 0; i < 3; i++) await manifest(join(few, '.agentv', 'results', `run-${i}`), 1000, 100 + i, 1 + i);
    const trendMany = await timed(process.execPath, [CLI, 'trend', '--json'], { cwd: project });
    const trendFew = await timed(process.execPath, [CLI, 'trend', '--json'], { cwd: few });

    // The same 30 runs published, and on disk.
    const { freshRepo, isolateGitEnv, makeWorkspace, publish } = await import('./publish-lib.mjs');
    isolateGitEnv();
    const repo = await freshRepo(work, 'repo');
    const onDisk = join(work, 'on-disk');
    for (let i = 0; i < 30; i++) {
      const ws = await makeWorkspace(work, { rows: 200, seed: 200 + i, day: i, turns: 1 });
      await publish({ run: ws.dir, cwd: repo });
      await cp(ws.dir, join(onDisk, '.agentv', 'results', `run-${String(i).padStart(2, '0')}`), { recursive: true });
    }
    const trendPublished = await timed(process.execPath, [CLI, 'trend', '--published', '--json'], { cwd: repo });
    const trendOnDisk = await timed(process.execPath, [CLI, 'trend', '--json'], { cwd: onDisk });

    const lines = [
      '## compare and trend',
      '',
      `Fresh processes, median of ${RUNS} after one warm-up; the machine is shared, so read the ratios.`,
      '',
      '| figure | median | ratio |',
      '|---|---|---|',
      `| compare, 100 rows per side | ${fmtMs(small)} | 1.00× (baseline) |`,
      `| compare, 20,000 rows per side | ${fmtMs(big)} | ${fmtRatio(big / small)} of 100 rows |`,
      agentv === null
        ? '| agentv compare, 20,000 rows | (client absent) | — |'
        : `| agentv compare, 20,000 rows (real client) | ${fmtMs(agentv)} | ours = ${fmtRatio(big / agentv)} of AgentV's |`,
      `| trend, 3 local runs × 1,000 rows | ${fmtMs(trendFew)} | 1.00× (baseline) |`,
      `| trend, 30 local runs × 1,000 rows | ${fmtMs(trendMany)} | ${fmtRatio(trendMany / trendFew)} of 3 runs |`,
      `| trend, 30 runs × 200 rows on disk | ${fmtMs(trendOnDisk)} | 1.00× (baseline) |`,
      `| trend --published, the same 30 runs on the results branch | ${fmtMs(trendPublished)} | ${fmtRatio(trendPublished / trendOnDisk)} of on disk |`,
    ];
    return { markdown: lines.join('\n') };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
