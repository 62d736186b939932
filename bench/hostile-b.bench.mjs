/**
 * Issue 40's hostile groups, part B (consistency), as a repeatable trial:
 *   npm run bench -- hostile-b      (writes its counts into BENCHMARKS.md)
 *   node bench/hostile-b.bench.mjs  (prints them)
 * - validate = publish: each kind of unsafe run (links, pipes, sockets, result-file pointers, unsafe
 *   run ids; AgentV 5.x's per-sample pointers when its client is there) through validate, report,
 *   show, publish, publish --allow-invalid, the daemon and a WIP checkpoint: every one must refuse it
 *   (the daemon parks it, the checkpoint leaves it out and says so) and nothing reaches a branch;
 * - derived files agree: seeded sequences of 2–3 clones publishing shards of one run at once; the run
 *   a fresh clone pulls must pass our validate (and AgentV's when its client is there) and count the
 *   union of the rows;
 * - hybrid blip: the bucket (s3rver behind a loopback TCP relay that goes away and comes back on the
 *   same port) away for 2, 4 and 6 s while a publish uploads; the publish must land and `pull` must
 *   say the payloads came from the bucket.
 * A case holds when the outcome is the one stated, within the bound (processes killed by pid after
 * BOUND ms). Invariants, not timings. Loopback only, everything in a temp dir.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, runBounded, TRIAL_ENV } from './lib.mjs';

/** Opt-in (it takes several minutes and a real `agentv eval`): runs only when named. */
export const optIn = true;
const BOUND = 120_000;
const ENV = TRIAL_ENV;
const AGENTV = join(ROOT, '..', 'shared', 'agentv-client', 'agentv');
const HAS_AGENTV = existsSync(AGENTV) && existsSync(join(ROOT, '..', 'shared', 'agentv-client', 'agentv.js'));

/** One process, killed by pid after BOUND ms; resolves with its exit code and output. */
async function proc(cmd, args, cwd, env = {}) {
  const r = await runBounded(cmd, args, { cwd, env: { ...ENV, ...env }, boundMs: BOUND });
  return { code: r.code ?? (r.signal ? 128 : 1), out: r.out, err: r.err };
}
const cli = (args, cwd, env) => proc(process.execPath, [CLI, ...args], cwd, env);
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();
const hasRef = (cwd, ref) => {
  try {
    git(cwd, 'rev-parse', '--verify', '-q', ref);
    return true;
  } catch {
    // rev-parse --verify exits 1 for a ref that does not exist: the answer, not a failure
    return false;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A seeded PRNG (mulberry32): the same sequences on every run of the trial. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const editJson = (file, edit) => {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  edit(doc);
  writeFileSync(file, JSON.stringify(doc, null, 2));
};
const editRow = (dir, edit) => {
  const idx = join(dir, 'index.jsonl');
  const row = JSON.parse(readFileSync(idx, 'utf8').trim());
  edit(row);
  writeFileSync(idx, `${JSON.stringify(row)}\n`);
};
const ATTEMPT = 's/alpha/m1/attempt-0';

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'agentv-hostile-b-'));
  const groups = {};
  const failures = [];
  const closers = [];
  const tally = (group, held, what) => {
    groups[group] ??= { tried: 0, held: 0 };
    groups[group].tried++;
    if (held) groups[group].held++;
    else failures.push(`${group}: ${what}`);
  };
  let n = 0;
  try {
    // ---- validate = publish --------------------------------------------------------------------
    const src = join(root, 'r.jsonl');
    const ROW = {
      test_id: 'alpha',
      suite: 's',
      target: 'm1',
      score: 1,
      timestamp: '2026-03-01T10:00:00Z',
      assertions: [{ text: 'says hi', passed: true }],
      answer: 'hi',
    };
    writeFileSync(src, `${JSON.stringify(ROW)}\n`);
    const pristine = join(root, 'pristine');
    await cli(['export', src, '--out', pristine, '--experiment', 'hostile'], root);
    const socketAt = async (p) => {
      const s = createServer();
      await new Promise((r) => s.listen(p, r));
      closers.push(() => s.close());
    };
    const KINDS = [
      ['an unreferenced link to /etc/passwd', (d) => symlinkSync('/etc/passwd', join(d, 'notes.txt')), /notes\.txt:? is a symbolic link leading out/],
      ['a directory link leading out', (d) => symlinkSync('/etc', join(d, 's', 'etc')), /s\/etc:? is a symbolic link leading out/],
      ['a directory link staying inside', (d) => symlinkSync('alpha', join(d, 's', 'alias')), /s\/alias:? is a symbolic link to a directory/],
      ['a named pipe', (d) => execFileSync('mkfifo', [join(d, ATTEMPT, 'stray.pipe')]), /stray\.pipe:? is a named pipe/],
      ['a socket', (d) => socketAt(join(d, 's.sock')), /s\.sock:? is a socket/],
      [
        'result.json output /etc/passwd',
        (d) => editJson(join(d, ATTEMPT, 'result.json'), (j) => (j.output = '/etc/passwd')),
        /output "\/etc\/passwd" points outside/,
      ],
      [
        'result.json grading_path ../',
        (d) => editJson(join(d, ATTEMPT, 'result.json'), (j) => (j.grading_path = '../../../../../etc/passwd')),
        /grading_path "(\.\.\/)+etc\/passwd" points outside/,
      ],
      ['run_id ../x', (d) => editRow(d, (r) => (r.run_id = '../x')), /run_id "\.\.\/x" is not a safe path segment/],
      ['run_id with a NUL', (d) => editRow(d, (r) => (r.run_id = 'a\u0000b')), /run_id "a\\u0000b" is not a safe path segment/],
    ];
    for (const [kind, spoil, says] of KINDS) {
      const dir = join(root, `k${n++}`, 'hostile', '2026-03-01T10-00-00-000Z');
      mkdirSync(join(dir, '..'), { recursive: true });
      cpSync(pristine, dir, { recursive: true });
      await spoil(dir);
      const work = join(root, `w${n++}`);
      mkdirSync(work);
      git(work, 'init', '-q');
      git(work, 'commit', '-q', '--allow-empty', '-m', 'init');
      const verbs = [
        ['validate', ['validate', dir], 1],
        ['report', ['report', dir, '--out', join(root, `r${n++}.html`)], 2],
        ['show', ['show', dir], 2],
        ['publish', ['publish', dir], 2],
        ['publish --allow-invalid', ['publish', dir, '--allow-invalid'], 2],
      ];
      const results = await Promise.all(verbs.map(([, args]) => cli(args, work)));
      for (const [i, [verb, , code]] of verbs.entries()) {
        const r = results[i];
        tally('validate = publish: each verb refuses', r.code === code && says.test(r.out + r.err), `${kind}, ${verb}: exit ${r.code}`);
      }
      tally('validate = publish: each verb refuses', !hasRef(work, 'refs/heads/agentv/results/v1'), `${kind}: a results branch appeared`);
      // The daemon parks it (refused for good, named in status), the WIP checkpoint leaves it out.
      const repo = join(root, `d${n++}`);
      mkdirSync(repo);
      git(repo, 'init', '-q');
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
      const inRepo = join(repo, '.agentv', 'results', 'hostile', '2026-03-01T10-00-00-000Z');
      mkdirSync(join(inRepo, '..'), { recursive: true });
      cpSync(pristine, inRepo, { recursive: true });
      await spoil(inRepo);
      const d = await cli(['daemon', '--once', '--dir', repo], repo);
      const status = await cli(['status', '--json', '--dir', repo], repo);
      let failed = [];
      try {
        failed = JSON.parse(status.out).extra.outbox.failed;
      } catch {
        // not JSON: the case does not hold (failed stays empty)
      }
      tally(
        'validate = publish: the daemon parks it',
        /publish refused; run parked/.test(d.err) && failed.length === 1 && says.test(String(failed[0].error)) && !hasRef(repo, 'refs/heads/agentv/results/v1'),
        `${kind}: daemon exit ${d.code}, ${failed.length} parked`,
      );
      // The incremental checkpoint names what it meets (new rows, their files, the top level); a full
      // one walks the whole folder (a link deep in a folder no row names).
      const w = await cli(['wip', 'checkpoint', dir, '--no-push'], work);
      const full = await cli(['wip', 'checkpoint', dir, '--full', '--no-push'], work);
      const said = w.err + full.err;
      tally(
        'validate = publish: a WIP checkpoint leaves it out and says so',
        w.code === 0 && full.code === 0 && says.test(said) && /not checkpointed/.test(said),
        `${kind}: exit ${w.code}/${full.code}`,
      );
    }
    if (HAS_AGENTV) {
      const home = join(root, 'home');
      const project = join(root, 'agentv-project');
      mkdirSync(home);
      cpSync(join(ROOT, '..', 'shared', 'agentv-client', 'sample-project'), project, { recursive: true });
      git(project, 'init', '-q');
      const e = await proc(AGENTV, ['eval', 'evals/demo.eval.yaml', '--experiment', 'demo'], project, { HOME: home, CI: '1' });
      const runs = readdirSync(join(project, '.agentv', 'results')).filter((x) => !x.startsWith('.'));
      if (e.code === 0 && runs.length === 1) {
        const made = join(project, '.agentv', 'results', runs[0]);
        const sample = join(
          readdirSync(made).find((x) => x.includes('--')),
          'sample-1',
        );
        const FIVE = [
          [
            '5.x result.json grading_path /etc/passwd',
            (d) => editJson(join(d, sample, 'result.json'), (j) => (j.grading_path = '/etc/passwd')),
            /grading_path "\/etc\/passwd" points outside/,
          ],
          [
            '5.x result.json target_execution.artifacts ../',
            (d) => editJson(join(d, sample, 'result.json'), (j) => (j.target_execution.artifacts.stdout_path = '../../../../etc/passwd')),
            /target_execution\.artifacts\.stdout_path .* points outside/,
          ],
          [
            '5.x target-execution.json artifacts /etc/passwd',
            (d) => editJson(join(d, sample, 'target-execution.json'), (j) => (j.artifacts.transcript_path = '/etc/passwd')),
            /artifacts\.transcript_path .* points outside/,
          ],
          [
            '5.x metrics.json source_artifacts ../',
            (d) => editJson(join(d, sample, 'metrics.json'), (j) => (j.source_artifacts.grading_path = '../../../x.json')),
            /source_artifacts\.grading_path .* points outside/,
          ],
        ];
        const work = join(root, 'w-agentv5');
        mkdirSync(work);
        git(work, 'init', '-q');
        git(work, 'commit', '-q', '--allow-empty', '-m', 'init');
        for (const [kind, spoil, says] of FIVE) {
          const dir = join(root, `f${n++}`, runs[0]);
          mkdirSync(join(dir, '..'), { recursive: true });
          cpSync(made, dir, { recursive: true });
          spoil(dir);
          for (const [verb, args, code] of [
            ['validate', ['validate', dir], 1],
            ['show', ['show', dir], 2],
            ['publish', ['publish', dir], 2],
            ['publish --allow-invalid', ['publish', dir, '--allow-invalid'], 2],
          ]) {
            const r = await cli(args, work);
            tally('validate = publish: AgentV 5.x pointers', r.code === code && says.test(r.out + r.err), `${kind}, ${verb}: exit ${r.code}`);
          }
        }
        tally('validate = publish: AgentV 5.x pointers', !hasRef(work, 'refs/heads/agentv/results/v1'), 'a results branch appeared');
      } else failures.push(`AgentV 5.x pointers: agentv eval exited ${e.code}`);
    }

    // ---- derived files agree after concurrent shard publishes -----------------------------------
    const RUN_ID = '2026-05-06T09-00-00-000Z';
    const shardRow = (i, pass) =>
      JSON.stringify({
        timestamp: new Date(Date.UTC(2026, 4, 6, 9, 0, i)).toISOString(),
        test_id: `t${i}`,
        suite: 's',
        target: 'gpt',
        score: pass ? 1 : 0,
        execution_status: 'ok',
        duration_ms: 100,
        assertions: [{ text: `t${i} holds`, passed: pass }],
      });
    const sequences = [
      {
        shards: [
          [1, 2, 3, 4, 5, 6],
          [1, 2, 3, 4, 7, 8],
        ],
        pass: Array(10).fill(true),
      },
    ];
    for (const seed of [40_001, 40_002, 40_003, 40_004]) {
      const r = rng(seed);
      const clones = 2 + Math.floor(r() * 2);
      const shards = Array.from({ length: clones }, () => [...new Set(Array.from({ length: 1 + Math.floor(r() * 6) }, () => 1 + Math.floor(r() * 9)))]);
      sequences.push({ shards, pass: Array.from({ length: 10 }, () => r() < 0.7) });
    }
    for (const [s, c] of sequences.entries()) {
      const base = join(root, `shards${s}`);
      const remote = join(base, 'remote.git');
      mkdirSync(base, { recursive: true });
      git(base, 'init', '-q', '--bare', remote);
      const clone = (name) => {
        const d = join(base, name);
        mkdirSync(d);
        git(d, 'init', '-q');
        git(d, 'remote', 'add', 'origin', remote);
        writeFileSync(join(d, 'README.md'), `# ${name}\n`);
        git(d, 'add', 'README.md');
        git(d, 'commit', '-q', '-m', 'init');
        return d;
      };
      const clones = c.shards.map((_, i) => clone(`ci${i}`));
      let ok = true;
      for (const [i, shard] of c.shards.entries()) {
        const tests = [0, ...shard];
        const file = join(base, `shard${i}.jsonl`);
        writeFileSync(file, tests.map((t) => shardRow(t, t === 0 || c.pass[t])).join('\n') + '\n');
        const e = await cli(['export', file, '--out', join(base, `shard${i}`), '--experiment', 'shards'], base);
        const p = await cli(['publish', join(base, `shard${i}`)], clones[i]);
        ok &&= e.code === 0 && p.code === 0;
      }
      const pushes = await Promise.all(clones.map((d) => cli(['sync'], d)));
      ok &&= pushes.every((p) => p.code === 0);
      const reader = clone('reader');
      const pulled = join(base, 'pulled');
      const pull = await cli(['pull', RUN_ID, '--fetch', '--out', pulled], reader);
      const union = new Set([0, ...c.shards.flat()]);
      const passed = [...union].filter((t) => t === 0 || c.pass[t]).length;
      let report = {};
      let summary = {};
      try {
        report = JSON.parse((await cli(['validate', pulled, '--json'], reader)).out);
        summary = JSON.parse((await cli(['summary', pulled, '--json'], reader)).out);
      } catch {
        // not JSON: the case does not hold (the checks below fail)
      }
      const what = `sequence ${s} (${c.shards.length} clones, ${union.size} rows)`;
      tally(
        'derived files agree: our validate',
        ok && pull.code === 0 && report.valid === true && report.rows === union.size,
        `${what}: ${JSON.stringify(report.problems ?? pull.err).slice(0, 200)}`,
      );
      tally(
        'derived files agree: summary.json counts the union',
        summary.source === 'summary.json' && summary.summary?.total === union.size && summary.summary?.passed === passed,
        `${what}: total ${summary.summary?.total}, passed ${summary.summary?.passed}`,
      );
      if (HAS_AGENTV) {
        const theirs = await proc(AGENTV, ['results', 'validate', pulled], join(root, 'agentv-project'), { HOME: join(root, 'home'), CI: '1' });
        tally("derived files agree: AgentV's validate", theirs.code === 0 && /\b0 error\(s\)/.test(theirs.out), `${what}: exit ${theirs.code}`);
      }
    }

    // ---- hybrid: a bucket away for a few seconds -------------------------------------------------
    const require = createRequire(import.meta.url);
    const S3rver = require('s3rver');
    const bucket = 'hostile-b';
    const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(root, 's3'), configureBuckets: [{ name: bucket }] });
    const { port: s3port } = await s3.run();
    closers.push(() => s3.close());
    // The relay the client talks to: closing it refuses connections and cuts those open, as a bucket that went away.
    const open = new Set();
    let relay = null;
    const relayUp = (port) =>
      new Promise((resolve) => {
        relay = createServer((c) => {
          const up = createConnection({ host: '127.0.0.1', port: s3port });
          open.add(c).add(up);
          c.pipe(up).pipe(c);
          const drop = () => {
            c.destroy();
            up.destroy();
            open.delete(c);
            open.delete(up);
          };
          c.on('error', drop).on('close', drop);
          up.on('error', drop).on('close', drop);
        });
        relay.listen(port, '127.0.0.1', () => resolve(relay.address().port));
      });
    const relayDown = () =>
      new Promise((resolve) => {
        for (const s of open) s.destroy();
        open.clear();
        relay.close(() => resolve());
      });
    const port = await relayUp(0);
    closers.push(() => relay?.close());
    const s3env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    const hybrid = join(root, 'hybrid');
    mkdirSync(join(hybrid, '.agentv'), { recursive: true });
    git(hybrid, 'init', '-q');
    git(hybrid, 'commit', '-q', '--allow-empty', '-m', 'init');
    writeFileSync(
      join(hybrid, '.agentv', 'config.yaml'),
      `results:\n  storage_mode: hybrid\n  object_store:\n    endpoint: http://127.0.0.1:${port}\n    region: us-east-1\n    bucket: ${bucket}\n    prefix: blip\n    force_path_style: true\n`,
    );
    for (const [i, away] of [2_000, 4_000, 6_000].entries()) {
      const file = join(root, `blip${i}.jsonl`);
      const rows = Array.from({ length: 3 }, (_, t) =>
        JSON.stringify({
          timestamp: new Date(Date.UTC(2026, 5, 1, 10, i, t)).toISOString(),
          test_id: `b${t}`,
          suite: 's',
          target: 'm',
          score: 1,
          execution_status: 'ok',
          input: [{ role: 'user', content: `q${t}` }],
          output: [{ role: 'assistant', content: `answer ${t} `.repeat(200) }],
        }),
      );
      writeFileSync(file, rows.join('\n') + '\n');
      const out = join(root, `blip${i}`);
      await cli(['export', file, '--out', out, '--experiment', 'blip'], root);
      await relayDown();
      const publishing = cli(['publish', out, '--json'], hybrid, s3env);
      await sleep(away);
      await relayUp(port);
      const p = await publishing;
      let stored = null;
      try {
        stored = JSON.parse(p.out).stored;
      } catch {
        // not JSON: the case does not hold
      }
      tally('hybrid: a publish rides out the bucket away', p.code === 0 && stored?.objects > 0, `${away / 1000} s away: exit ${p.code} ${p.err.slice(0, 200)}`);
      const runId = JSON.parse(p.out || '{}').run_id ?? JSON.parse(p.out || '{}').runId;
      const pulled = await cli(['pull', String(runId), '--with-artifacts', '--out', join(root, `pulled-blip${i}`)], hybrid, s3env);
      tally(
        'hybrid: pull says where payloads came from',
        pulled.code === 0 && /from the object store/.test(pulled.out) && !/from the artifacts branch/.test(pulled.out),
        `${away / 1000} s: exit ${pulled.code} ${pulled.out.slice(0, 200)}`,
      );
    }
  } finally {
    for (const c of closers) await c();
    rmSync(root, { recursive: true, force: true });
  }
  const total = Object.values(groups).reduce((a, g) => ({ tried: a.tried + g.tried, held: a.held + g.held }), { tried: 0, held: 0 });
  const markdown = [
    '## Hostile inputs, round three: consistency (bench/hostile-b.bench.mjs, issue 40 part B)',
    '',
    'Each kind of unsafe run (links out and in, a pipe, a socket, result-file pointers, unsafe run ids;',
    "AgentV 5.x's per-sample pointers from a real `agentv eval`) through validate, report, show, publish,",
    'publish --allow-invalid, `daemon --once` and `wip checkpoint`; seeded sequences of 2–3 clones',
    'publishing shards of one run at once, read back by a fresh clone; a hybrid publish with the bucket',
    'away for 2, 4 and 6 s. Held: every verb refuses (validate exit 1, the others 2, the daemon parks,',
    'the checkpoint leaves it out and says so) and no branch appears; the pulled run passes our validate',
    "and AgentV's and its summary.json counts the union; the publish lands and pull names the bucket.",
    `Invariants, not timings; each process bounded at ${BOUND / 1000} s.`,
    '',
    '| group | tried | held |',
    '| --- | ---: | ---: |',
    ...Object.entries(groups).map(([g, c]) => `| ${g} | ${c.tried} | ${c.held} |`),
    `| **all** | **${total.tried}** | **${total.held}** |`,
    '',
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
    '',
    'Before (the trial of issue 40): validate passed, report and show read, what publish refused; the daemon',
    'retried such a run forever; a WIP checkpoint dropped unsafe pieces in silence and stored unsafe rows;',
    "AgentV 5.x's per-sample pointers were not checked at all; two shards' equal derived files left",
    '"timing.json counts 7 result(s) but index.jsonl has 9"; a hybrid publish gave up after about 3 s.',
  ].join('\n');
  return { markdown, groups, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown } = await run();
  process.stdout.write(markdown + '\n');
}
