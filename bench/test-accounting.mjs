#!/usr/bin/env node
/**
 * Where the test suite's CPU goes, process by process: runs `vitest run <args>` with Linux process
 * accounting on (acct(2): one record per process that ends, with its parent, command name and CPU
 * time), then charges every process the suite started to the test file whose worker started it and
 * to a kind — the worker itself, git, AgentV 5.x (Bun), AgentV 4.42 (node under its wrapper), our
 * CLI as a process, a node under git (the merge driver), Chromium, other.
 *
 *   node bench/test-accounting.mjs [--tier fast|pr|all] [--top N] [--json out.json] -- [vitest args…]
 *
 * `--tier` picks the tier (test/tiers.mjs): fast runs vitest.fast.config.ts, pr (the default) is
 * `npm test`'s test files, all is `npm run test:all`'s. The tiers that use dist/ need a fresh
 * build first (`npm run build`): the run refuses a stale one. BENCHMARKS.md, "Test tiers", has the
 * table these figures go into, one run per tier on an idle machine.
 *
 * Needs root (acct(2)) and python3 to switch accounting on and off (Node has no binding for it);
 * without them it says so and exits 2. Nothing here runs in `npm test`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash < 0 ? argv : argv.slice(0, dash);
const vitestArgs = dash < 0 ? [] : argv.slice(dash + 1);
const opt = (name, dflt) => {
  const i = own.indexOf(name);
  return i < 0 ? dflt : own[i + 1];
};
const top = Number(opt('--top', '40'));
const jsonOut = opt('--json', null);
const tier = opt('--tier', 'pr');
if (!['fast', 'pr', 'all'].includes(tier)) {
  console.error(`test-accounting: --tier ${tier}: expected fast, pr or all`);
  process.exit(2);
}
const tierArgs = tier === 'fast' ? ['--config', 'vitest.fast.config.ts'] : [];

const ACCT = 'import ctypes,sys\nl=ctypes.CDLL(None,use_errno=True)\nr=l.acct(sys.argv[1].encode() if len(sys.argv)>1 else None)\nsys.exit(0 if r==0 else 1)';
function acct(file) {
  const r = spawnSync('python3', ['-c', ACCT, ...(file ? [file] : [])], { stdio: 'inherit' });
  return r.status === 0;
}

/** comp_t: 13-bit mantissa, 3-bit base-8 exponent, in ticks of 1/100 s. */
const comp = (v) => (v & 0x1fff) * 8 ** (v >> 13);

/** acct_v3 records (include/uapi/linux/acct.h), 64 bytes each. */
function readRecords(file) {
  const buf = readFileSync(file);
  const out = [];
  for (let o = 0; o + 64 <= buf.length; o += 64) {
    if (buf[o + 1] !== 3) continue;
    const btime = buf.readUInt32LE(o + 24);
    const etime = buf.readFloatLE(o + 28) / 100;
    const cpu = (comp(buf.readUInt16LE(o + 32)) + comp(buf.readUInt16LE(o + 34))) / 100;
    const comm = buf
      .subarray(o + 48, o + 64)
      .toString('latin1')
      .replace(/\0.*$/s, '');
    out.push({ pid: buf.readUInt32LE(o + 16), ppid: buf.readUInt32LE(o + 20), comm, cpu, start: btime, end: btime + etime });
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'test-accounting-'));
const acctFile = join(dir, 'acct');
const cpuLog = join(dir, 'cpu.log');
writeFileSync(acctFile, '');
if (!acct(acctFile)) {
  console.error('test-accounting: cannot switch process accounting on (needs root and python3)');
  process.exit(2);
}
const started = Date.now();
const child = spawn('npx', ['vitest', 'run', ...tierArgs, ...vitestArgs], {
  stdio: 'inherit',
  env: { ...process.env, AGENTV_TEST_CPU_LOG: cpuLog, ...(tier === 'all' ? { AGENTV_TEST_TIER: 'all' } : {}) },
});
const code = await new Promise((r) => child.on('close', (c) => r(c ?? 1)));
acct(null);
const wall = (Date.now() - started) / 1000;

const recs = readRecords(acctFile);
const files = new Map();
for (const line of readFileSync(cpuLog, 'utf8').split('\n').filter(Boolean)) {
  const { file, pid } = JSON.parse(line);
  if (pid) files.set(pid, file);
}
// A pid is reused over a long run: a parent is the record with that pid alive when the child began.
const byPid = new Map();
for (const r of recs) (byPid.get(r.pid) ?? byPid.set(r.pid, []).get(r.pid)).push(r);
const parentOf = (r) => (byPid.get(r.ppid) ?? []).find((p) => p.start <= r.start + 1 && p.end >= r.start - 1);
const workers = new Set(recs.filter((r) => files.has(r.pid) && r.comm === 'node'));
function workerOf(r) {
  for (let p = r, i = 0; p && i < 64; p = parentOf(p), i++) if (workers.has(p)) return p;
  return null;
}
function kind(r, w) {
  if (r === w) return 'test process';
  const chain = [];
  for (let p = parentOf(r); p && p !== w && chain.length < 4; p = parentOf(p)) chain.push(p.comm);
  if (r.comm === 'bun') return 'AgentV 5.x (bun)';
  if (r.comm === 'node' && chain[0] === 'bash') return 'AgentV 4.42 (node)';
  if (r.comm === 'node' && chain[0]?.startsWith('git')) return 'node under git (merge driver)';
  if (r.comm === 'node') return 'our CLI as a process (node)';
  if (r.comm.startsWith('git')) return 'git';
  if (/chrom|headless/.test(r.comm)) return 'Chromium';
  return 'other';
}
const perFile = new Map();
const perKind = new Map();
for (const r of recs) {
  const w = workerOf(r);
  if (!w) continue;
  const file = files.get(w.pid);
  const k = kind(r, w);
  const f = perFile.get(file) ?? perFile.set(file, { total: 0, kinds: {} }).get(file);
  f.total += r.cpu;
  f.kinds[k] = (f.kinds[k] ?? 0) + r.cpu;
  const pk = perKind.get(k) ?? perKind.set(k, { cpu: 0, processes: 0 }).get(k);
  pk.cpu += r.cpu;
  pk.processes++;
}
const total = [...perFile.values()].reduce((a, f) => a + f.total, 0);
const r1 = (n) => Math.round(n * 10) / 10;
console.log(
  `\ntier ${tier}: vitest exited ${code}; ${r1(wall)} s wall; ${perFile.size} test files; ${r1(total)} CPU-s charged to them (${r1(total / wall)} cores)`,
);
console.log('\nBy kind of process:');
for (const [k, v] of [...perKind].sort((a, b) => b[1].cpu - a[1].cpu))
  console.log(`  ${r1(v.cpu).toString().padStart(8)} CPU-s  ${String(v.processes).padStart(6)} processes  ${(v.cpu / v.processes).toFixed(2)} s each  ${k}`);
console.log(`\nThe ${top} heaviest files:`);
for (const [file, f] of [...perFile].sort((a, b) => b[1].total - a[1].total).slice(0, top)) {
  const parts = Object.entries(f.kinds)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${r1(v)}`)
    .join(', ');
  console.log(`  ${r1(f.total).toString().padStart(7)}  ${file}: ${parts}`);
}
if (jsonOut)
  writeFileSync(
    jsonOut,
    `${JSON.stringify({ tier, code, wall, total, perKind: Object.fromEntries(perKind), perFile: Object.fromEntries(perFile) }, null, 2)}\n`,
  );
rmSync(dir, { recursive: true, force: true });
process.exit(code);
