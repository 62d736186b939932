/**
 * Issue 41's figures: `publish --no-push` (library call, local commit only) of synthetic runs of
 * about 2,400 and 24,000 files against raw `git fast-import` of the same files into one commit
 * (the floor), and `validate` of the larger run against that publish. Targets: publish <= 2x the
 * floor at 2,400 files, <= 1.5x at 24,000; validate <= 0.5x publish at 24,000.
 *
 * Each sample times the floor and publish back to back (the pair shares the machine's load at that
 * moment); the figures are medians of the pair ratios. BENCH_FLOOR_SIZES, BENCH_RUNS override.
 * Opt-in (several minutes): `npm run bench -- publish-floor`, or `node bench/publish-floor.bench.mjs`
 * (prints the figures as JSON).
 */
import { performance } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, fmtMs, fmtRatio, median } from './lib.mjs';
import { freshRepo, isolateGitEnv, makeWorkDir, makeWorkspace, publish, rawFastImport, workspaceOfSize } from './publish-lib.mjs';

const { validateRun } = await import(join(ROOT, 'dist/runs/validate.js'));
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SIZES = (process.env.BENCH_FLOOR_SIZES ?? '2400,24000').split(',').map(Number);
const log = (m) => process.stderr.write(`  ${m}\n`);

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export const optIn = true;

async function measure() {
  isolateGitEnv();
  const work = await makeWorkDir();
  const out = [];
  try {
    let n = 0;
    for (const size of SIZES) {
      const ws = await workspaceOfSize(work, size, { seed: size, day: 0 });
      const init = await makeWorkspace(work, { rows: 1, seed: 99, day: 5 });
      const pairs = [];
      for (let i = 0; i < RUNS; i++) {
        const a = await freshRepo(work, `floor-${n++}`);
        const b = await freshRepo(work, `ours-${n++}`);
        await publish({ run: init.dir, cwd: b, push: false });
        const floor = await time(() => rawFastImport(a, ws.dir, 'runs/bench/2026-01-01/x'));
        const ours = await time(() => publish({ run: ws.dir, cwd: b, push: false }));
        const valid = await time(async () => {
          const r = await validateRun({ run: ws.dir });
          if (!r.valid) throw new Error(`the bench run does not validate: ${JSON.stringify(r.problems.slice(0, 3))}`);
        });
        pairs.push({ floor, ours, valid });
        await rm(a, { recursive: true, force: true });
        await rm(b, { recursive: true, force: true });
      }
      const row = {
        files: ws.files,
        floor: median(pairs.map((p) => p.floor)),
        publish: median(pairs.map((p) => p.ours)),
        validate: median(pairs.map((p) => p.valid)),
        publish_per_floor: median(pairs.map((p) => p.ours / p.floor)),
        validate_per_publish: median(pairs.map((p) => p.valid / p.ours)),
      };
      log(
        `${row.files} files: floor ${fmtMs(row.floor)}, publish ${fmtMs(row.publish)} (${fmtRatio(row.publish_per_floor)}), validate ${fmtMs(row.validate)} (${fmtRatio(row.validate_per_publish)} of publish)`,
      );
      out.push(row);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return out;
}

const pass = (ok) => (ok ? '✅' : '❌');

export async function run() {
  const sizes = await measure();
  const rows = sizes.map(
    (r) =>
      `| ${r.files.toLocaleString('en-US')} | ${fmtMs(r.floor)} | ${fmtMs(r.publish)} | **${fmtRatio(r.publish_per_floor)}** (≤ ${r.files > 10_000 ? '1.5' : '2'}x ${pass(r.publish_per_floor <= (r.files > 10_000 ? 1.5 : 2))}) | ${fmtMs(r.validate)} | ${fmtRatio(r.validate_per_publish)}${r.files > 10_000 ? ` (≤ 0.5x ${pass(r.validate_per_publish <= 0.5)})` : ''} |`,
  );
  const markdown = [
    '## publish at the floor: a run opened once (issue 41)',
    '',
    `\`bench/publish-floor.bench.mjs\` (opt-in): \`publish({ push: false })\` of a synthetic run vs raw \`git fast-import\` of the same files (the floor), and \`validateRun\` of the same run; each sample times the three back to back, the ratios are medians of the per-sample ratios (${RUNS} samples), ${new Date().toISOString().slice(0, 10)}, Node ${process.version}.`,
    '',
    '| files | floor | publish | publish / floor | validate | validate / publish |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  return { markdown, sizes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown, sizes } = await run();
  process.stderr.write(`${markdown}\n`);
  process.stdout.write(`${JSON.stringify({ when: new Date().toISOString(), node: process.version, runs: RUNS, sizes }, null, 2)}\n`);
}
