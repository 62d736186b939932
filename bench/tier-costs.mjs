#!/usr/bin/env node
/**
 * What each test tier costs, from one accounted run of the whole matrix: reads the JSON that
 * `node bench/test-accounting.mjs --tier all --json all.json` wrote and sums its per-file CPU-s
 * by the tier test/tiers.mjs gives each file, so a tier's budget (CONTRIBUTING.md, "Test tiers")
 * can be checked, and a file moved, without running every tier.
 *
 *   node bench/tier-costs.mjs all.json [--top N]
 *
 * A file in the run but in no tier, or in a tier but not in the run, is listed: the run is of
 * another tree, or the file was skipped.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { FAST, FULL_ONLY, PR } from '../test/tiers.mjs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/tier-costs.mjs <accounting.json> [--top N]');
  process.exit(2);
}
const top = rest[0] === '--top' ? Number(rest[1]) : 15;
const run = JSON.parse(readFileSync(file, 'utf8'));
// cpu-report.ts logs a file by its base name; test/tiers.mjs holds paths (base names are unique).
const tierOf = new Map();
for (const [tier, list] of [
  ['fast', FAST],
  ['pr', PR],
  ['full-only', FULL_ONLY],
])
  for (const f of list) tierOf.set(basename(f), tier);

const sums = { fast: { cpu: 0, files: 0, kinds: {} }, pr: { cpu: 0, files: 0, kinds: {} }, 'full-only': { cpu: 0, files: 0, kinds: {} } };
const rows = [];
const unplaced = [];
for (const [name, f] of Object.entries(run.perFile)) {
  const tier = tierOf.get(name);
  if (!tier) {
    unplaced.push(name);
    continue;
  }
  sums[tier].cpu += f.total;
  sums[tier].files++;
  for (const [k, v] of Object.entries(f.kinds)) sums[tier].kinds[k] = (sums[tier].kinds[k] ?? 0) + v;
  rows.push({ name, tier, cpu: f.total });
}
const r1 = (n) => Math.round(n * 10) / 10;
const kinds = (k) =>
  Object.entries(k)
    .sort((a, b) => b[1] - a[1])
    .map(([n, v]) => `${n} ${r1(v)}`)
    .join(', ');
console.log(`run of tier "${run.tier ?? '?'}": ${r1(run.total)} CPU-s in ${Object.keys(run.perFile).length} files, ${r1(run.wall)} s wall`);
console.log(`  test:fast  ${r1(sums.fast.cpu)} CPU-s, ${sums.fast.files} files (budget 60): ${kinds(sums.fast.kinds)}`);
const prCpu = sums.fast.cpu + sums.pr.cpu;
console.log(
  `  npm test   ${r1(prCpu)} CPU-s, ${sums.fast.files + sums.pr.files} files (budget 900; the slow suites at PR_ENV's sizes cost less than in this run)`,
);
console.log(`  test:all   ${r1(prCpu + sums['full-only'].cpu)} CPU-s (full-only files: ${r1(sums['full-only'].cpu)})`);
console.log(`\nThe ${top} heaviest files of the pull-request tier:`);
for (const r of rows
  .filter((x) => x.tier !== 'full-only')
  .sort((a, b) => b.cpu - a.cpu)
  .slice(0, top))
  console.log(`  ${r1(r.cpu).toString().padStart(7)}  ${r.name} (${r.tier})`);
const listed = new Set(Object.keys(run.perFile));
const absent = [...tierOf.keys()].filter((n) => !listed.has(n));
if (unplaced.length) console.log(`\nIn the run but in no tier: ${unplaced.join(', ')}`);
if (absent.length) console.log(`\nIn a tier but not in the run: ${absent.join(', ')}`);
