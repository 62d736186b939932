/**
 * The two-Dashboard export differential over every real AgentV result file, once (opt-in: `npm
 * run bench -- export-both-dashboards`). It runs test/conformance/export-both-dashboards.test.ts
 * itself with AGENTV_EXPORT_DASHBOARDS=full (npm test runs three of the fixtures: the full crawl
 * is well over the file's CPU budget) and reports what the crawl counted per AgentV line: runs,
 * Dashboard requests, errors, answers, inputs and graders checked, graders not shown by name.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

export const optIn = true;

/** Runs the suite over every fixture; resolves with its report and the run's CPU (rejects when a test failed). */
export async function measure() {
  const report = join(await mkdtemp(join(tmpdir(), 'export-dashboards-bench-')), 'report.json');
  const started = Date.now();
  const code = await new Promise((resolve, reject) => {
    const child = spawn('npx', ['vitest', 'run', 'test/conformance/export-both-dashboards.test.ts'], {
      cwd: ROOT,
      env: { ...process.env, AGENTV_EXPORT_DASHBOARDS: 'full', AGENTV_EXPORT_DASHBOARDS_REPORT: report },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error(`the full export differential failed (vitest exit ${code}): see its output above`);
  return { ...JSON.parse(await readFile(report, 'utf8')), wall_s: Math.round((Date.now() - started) / 1000) };
}

export async function run() {
  const r = await measure();
  const row = (line) => {
    const x = r[line];
    return `| ${line} | ${x.runs} | ${x.requests} | ${x.failures.length} | ${x.answers} | ${x.inputs} | ${x.graders} | ${x.unnamed.length} |`;
  };
  const markdown = `## Export in both Dashboards: every real result file, once

\`bench/export-both-dashboards.bench.mjs\` runs test/conformance/export-both-dashboards.test.ts over all ${r.fixtures} fixtures (npm test: three). Each fixture exported and published by us to a 5.x-layout branch and to a 4.42-layout branch; each AgentV Dashboard crawls every run (detail, suites, categories; each test's eval, files, and on 5.x transcript and trace session; every file of a run's first test). One run, ${r.wall_s} s wall.

| AgentV | runs | requests | errors | answers checked | inputs checked | graders checked | graders not shown by name |
| --- | --- | --- | --- | --- | --- | --- | --- |
${row('5.x')}
${row('4.42')}
`;
  return { markdown, report: r };
}
