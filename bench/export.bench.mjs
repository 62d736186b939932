/**
 * Issue 2 figures: `export` of ~200 MB of synthetic JSONL against the baseline (read, parse,
 * write the same files with the same sizes), as a ratio of medians; and export's peak RSS at
 * 50 MB and 500 MB of input (target: under 300 MB whatever the size).
 */
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CLI, ROOT, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';
import { writeSyntheticResults } from './synthetic.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function manifestOf(dir) {
  const files = [];
  const walk = async (d) => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else files.push([relative(dir, p), (await stat(p)).size]);
    }
  };
  await walk(dir);
  return files;
}

export async function run() {
  const work = await mkdtemp(join(tmpdir(), 'bench-export-'));
  try {
    const input = join(work, 'results-200.jsonl');
    const rows = await writeSyntheticResults(input, { bytes: 200 * 1024 * 1024, seed: 1, turns: 6 });
    const inputMb = (await stat(input)).size / 1048576;

    const exportMs = [];
    const baselineMs = [];
    let manifest = null;
    for (let i = 0; i < RUNS; i++) {
      const out = join(work, `out-${i}`);
      const e = await runMeasured(process.execPath, [CLI, 'export', input, '--out', out]);
      exportMs.push(e.ms);
      if (!manifest) {
        manifest = { rows, files: await manifestOf(out) };
        await writeFile(join(work, 'manifest.json'), JSON.stringify(manifest));
      }
      await rm(out, { recursive: true, force: true });
      const bout = join(work, `base-${i}`);
      const b = await runMeasured(process.execPath, [join(ROOT, 'bench/export-baseline.mjs'), input, join(work, 'manifest.json'), bout]);
      baselineMs.push(b.ms);
      await rm(bout, { recursive: true, force: true });
    }

    const rss = [];
    for (const mb of [50, 500]) {
      const file = join(work, `results-${mb}.jsonl`);
      const n = await writeSyntheticResults(file, { bytes: mb * 1024 * 1024, seed: 2, turns: 6 });
      const out = join(work, `rss-${mb}`);
      const r = await runMeasured(process.execPath, [CLI, 'export', file, '--out', out]);
      rss.push({ mb, rows: n, peak: r.peakRssMb, ms: r.ms });
      await rm(out, { recursive: true, force: true });
      await rm(file, { force: true });
    }

    const ratio = median(exportMs) / median(baselineMs);
    const markdown = `## export (issue 2)

Input: ${inputMb.toFixed(0)} MB of synthetic AgentV JSONL (${rows.toLocaleString('en-US')} rows, 2 targets, 6 assistant turns with tool calls), ${manifest.files.length.toLocaleString('en-US')} files written. Medians of ${RUNS} runs, each a fresh process.

| measure | median | ratio to baseline | target |
|---|---|---|---|
| baseline: read + JSON.parse + write the same files (same sizes) | ${fmtMs(median(baselineMs))} | 1.00x | |
| \`agentv-results export\` (bundle layout) | ${fmtMs(median(exportMs))} | **${fmtRatio(ratio)}** | ≤ 1.5x |

Peak RSS of \`export\` (GNU time %M):

| input | rows | peak RSS | target |
|---|---|---|---|
${rss.map((r) => `| ${r.mb} MB | ${r.rows.toLocaleString('en-US')} | ${r.peak?.toFixed(0)} MB | < 300 MB |`).join('\n')}
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
