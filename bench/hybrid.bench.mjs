/**
 * Issue 29's figures: `storage_mode: hybrid` (payloads in an S3-compatible bucket) against
 * `git-native` (payloads on the artifacts branch).
 *
 *  1. Publishing one run with 200 MB of transcripts (40 tests × 5 MB of transcript-like text,
 *     compressible as real transcripts are) into a fresh repository, in each mode: the time of
 *     `publish()` and how much the repository grows (`git count-objects -v`: loose + packed bytes),
 *     against the payload bytes. Goal: the repository grows by < 1% of the payload bytes in hybrid.
 *     The bucket is s3rver (npm) on 127.0.0.1 writing to a local disk, so the hybrid time is a
 *     lower bound of what a remote bucket costs (the upload is a network transfer there).
 *  2. The yearly cost model of BENCHMARKS.md ("Archive and retention": 1.8 M runs a year) in both
 *     modes, from the packed bytes of the benchmark's 40-row synthetic run on each branch and the
 *     bytes it puts in the bucket.
 */
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmtMs, fmtRatio, median, timeIt } from './lib.mjs';
import { git, isolateGitEnv, freshRepo, makeWorkspace, publish } from './publish-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TESTS = 40;
const PER_TRANSCRIPT = 5 * 1024 * 1024;
const RUNS_A_YEAR = 1_800_000;
const require = createRequire(import.meta.url);
const log = (m) => process.stderr.write(`  ${m}\n`);

/** Transcript-like text from a seeded generator: JSON lines of words (compresses like real transcripts, ~3-4x). */
function transcriptText(seed, bytes) {
  const words = [
    'the',
    'tool',
    'call',
    'returned',
    'file',
    'error',
    'patch',
    'test',
    'passed',
    'assistant',
    'user',
    'diff',
    'line',
    'function',
    'value',
    'build',
  ];
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const parts = [];
  let size = 0;
  while (size < bytes) {
    let content = '';
    for (let i = 0; i < 60; i++) content += `${words[next() % words.length]}${next() % 7 === 0 ? ` ${next() % 100000}` : ''} `;
    const line = `${JSON.stringify({ role: next() % 2 ? 'assistant' : 'tool', turn: parts.length, content })}\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

async function files(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath ?? e.path, e.name));
  return out;
}

/** Bytes of the repository's object store (loose + packs: fast-import writes one pack per publish). */
async function repoBytes(dir) {
  const out = (await git.runGit(['count-objects', '-v'], { cwd: dir })).stdout.toString();
  const kb = (k) => Number(new RegExp(`^${k}: (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
  return (kb('size') + kb('size-pack')) * 1024;
}

async function branchBytes(dir, ref) {
  // Packed size of the objects reachable from one branch alone.
  const revs = (await git.runGit(['rev-list', '--objects', ref], { cwd: dir })).stdout.toString();
  const r = await git.runGit(['pack-objects', '--stdout', '-q'], {
    cwd: dir,
    input: `${revs
      .split('\n')
      .map((l) => l.split(' ')[0])
      .filter(Boolean)
      .join('\n')}\n`,
  });
  return r.stdout.length;
}

function writeConfig(repo, endpoint, bucket, hybrid) {
  mkdirSync(join(repo, '.agentv'), { recursive: true });
  writeFileSync(
    join(repo, '.agentv', 'config.yaml'),
    hybrid
      ? `results:\n  storage_mode: hybrid\n  object_store:\n    endpoint: ${endpoint}\n    region: us-east-1\n    bucket: ${bucket}\n    prefix: bench\n    force_path_style: true\n`
      : 'results:\n  storage_mode: git-native\n',
  );
}

const fmtBytes = (b) => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} KB`);

export async function run() {
  isolateGitEnv();
  const parent = await mkdtemp(join(tmpdir(), 'agentv-bench-hybrid-'));
  const S3rver = require('s3rver');
  const bucket = 'bench';
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(parent, 's3'), configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  try {
    // 1. A run with 200 MB of transcripts.
    const big = await makeWorkspace(parent, { rows: TESTS, experiment: 'heavy', turns: 2 });
    const transcripts = (await files(big.dir)).filter((f) => f.endsWith('transcript.json')).slice(0, TESTS);
    let payloadBytes = 0;
    transcripts.forEach((f, i) => {
      const data = transcriptText(i + 1, PER_TRANSCRIPT);
      writeFileSync(f.replace(/transcript\.json$/, 'transcript-raw.log'), data);
      payloadBytes += data.length;
    });
    log(`run with ${fmtBytes(payloadBytes)} of transcripts (${transcripts.length} files)`);
    const modes = {};
    for (const mode of ['git-native', 'hybrid']) {
      const times = [];
      let growth = 0;
      for (let i = 0; i < RUNS; i++) {
        const repo = await freshRepo(parent, `${mode}-${i}`);
        await git.runGit(['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo });
        writeConfig(repo, endpoint, bucket, mode === 'hybrid');
        const before = await repoBytes(repo);
        // A fresh bucket prefix per sample would hide nothing: the first sample uploads, later ones
        // find the objects (content addressing). Only the first hybrid sample is an upload; report both.
        const { ms } = await timeIt(() => publish({ run: big.dir, cwd: repo, push: false }));
        times.push(ms);
        growth = (await repoBytes(repo)) - before;
        log(`${mode} #${i + 1}: ${fmtMs(ms)}, repository +${fmtBytes(growth)}`);
        await rm(repo, { recursive: true, force: true });
      }
      modes[mode] = { first: times[0], median: median(times), again: median(times.length > 1 ? times.slice(1) : times), growth };
    }

    // 2. The cost model: the 40-row synthetic run of the archive benchmark, packed per branch.
    const small = await makeWorkspace(parent, { rows: 40, experiment: 'model', minute: 1 });
    const model = {};
    for (const mode of ['git-native', 'hybrid']) {
      const repo = await freshRepo(parent, `model-${mode}`);
      writeConfig(repo, endpoint, bucket, mode === 'hybrid');
      const s3Before = await dirBytes(join(parent, 's3'));
      const res = await publish({ run: small.dir, cwd: repo, push: false });
      const results = await branchBytes(repo, 'refs/heads/agentv/results/v1');
      const artifacts = mode === 'hybrid' ? 0 : await branchBytes(repo, 'refs/heads/agentv/artifacts/v1');
      const stored = mode === 'hybrid' ? res.stored.bytes : 0;
      model[mode] = { results, artifacts, stored, s3Disk: (await dirBytes(join(parent, 's3'))) - s3Before };
      log(`${mode}: results ${fmtBytes(results)}, artifacts ${fmtBytes(artifacts)}, bucket ${fmtBytes(stored)}`);
    }

    const g = modes['git-native'];
    const h = modes.hybrid;
    const share = h.growth / payloadBytes;
    const year = (b) => fmtBytes(b * RUNS_A_YEAR);
    const gn = model['git-native'];
    const hy = model.hybrid;
    const markdown = `## Storage modes: hybrid (object store) vs git-native

\`bench/hybrid.bench.mjs\`. The bucket is s3rver (npm) on 127.0.0.1 writing to local disk through the AWS SDK, so hybrid times are a lower bound for a bucket across a network.

**Publish of one run with ${fmtBytes(payloadBytes)} of transcripts** (${TESTS} tests × 5 MB, text that compresses like real transcripts), into a fresh repository, median of ${RUNS}:

| mode | publish | repository growth | growth / payload bytes |
|---|---|---|---|
| git-native | ${fmtMs(g.median)} | ${fmtBytes(g.growth)} | ${(100 * (g.growth / payloadBytes)).toFixed(2)}% |
| hybrid, first publish (uploads everything) | ${fmtMs(h.first)} (${fmtRatio(h.first / g.median)} of git-native) | ${fmtBytes(h.growth)} | ${(100 * share).toFixed(3)}% ${share < 0.01 ? '✅ < 1%' : '❌ goal < 1%'} |
| hybrid, again into a fresh repository (objects already stored: HEAD only) | ${fmtMs(h.again)} (${fmtRatio(h.again / g.median)}) | ${fmtBytes(h.growth)} | |

**Yearly cost model, 1.8 M runs** (100 machines × 50 runs a day), from the benchmark's 40-row synthetic run published once in each mode (packed bytes reachable from each branch; bucket bytes are the objects as stored, uncompressed):

| mode | results branch | artifacts branch | bucket | git total a year | bucket a year |
|---|---|---|---|---|---|
| git-native | ${fmtBytes(gn.results)} | ${fmtBytes(gn.artifacts)} | — | ${year(gn.results + gn.artifacts)} | — |
| hybrid | ${fmtBytes(hy.results)} | 0 | ${fmtBytes(hy.stored)} | ${year(hy.results)} | ${year(hy.stored)} |

The git-native figure here (one run packed alone, no deltas against other runs) is above the 284 GB of "Archive and retention", which packs many runs together; compare the two modes within this table. The bucket holds payloads uncompressed (S3 stores bytes as sent), so it is larger than the packed artifacts branch it replaces, on storage priced per TB rather than a repository's size limit. The publish times were measured while other work shared the machine's 2 cores: the absolute times are inflated, the ratios are from one run.

In hybrid the repository keeps metadata, summaries and pointers only; every payload byte goes to the bucket, where a lifecycle rule (not git history) decides how long it stays. The results branch is what still grows with the run count: retention and new branch generations (above) remain the way to bound it.
`;
    return { markdown };
  } finally {
    await server.close();
    await rm(parent, { recursive: true, force: true });
  }
}

async function dirBytes(dir) {
  let n = 0;
  try {
    const { stat } = await import('node:fs/promises');
    for (const f of await files(dir)) n += (await stat(f)).size;
  } catch {}
  return n;
}
