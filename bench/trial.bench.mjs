/**
 * The hostile-input / kill / remote-fault trial of issue 13 as a repeatable script:
 *   npm run bench -- trial          (writes its counts into BENCHMARKS.md)
 *   node bench/trial.bench.mjs      (prints them)
 * Bounded (fixed case list, TRIAL_KILLS kill -9 trials, default 12), seeded (kill delays), loopback
 * only (an unreachable remote is a closed port on 127.0.0.1), everything in a temp dir. Each case
 * checks the invariants, not a timing: no stack trace, exit code in the documented set, no byte
 * from outside the run in any output, nothing committed when publish refuses, the branch pair
 * consistent and writable after every kill, no credential printed.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from './lib.mjs';
import { rng } from './synthetic.mjs';

const CANARY = 'CANARY-trial-9d1e';
const TOKEN = 'ghp_TRIALtoken000';
const RESULTS = 'refs/heads/agentv/results/v1';
const ARTIFACTS = 'refs/heads/agentv/artifacts/v1';
const ENV = {
  ...process.env,
  NO_COLOR: '1',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@t.invalid',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@t.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

function cli(args, cwd, env = {}, timeoutMs = 60_000) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...ENV, ...env }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
  return { code: r.status ?? 128, out: (r.stdout ?? '') + (r.stderr ?? '') };
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();
const tipOf = (cwd, ref) => spawnSync('git', ['rev-parse', '-q', '--verify', ref], { cwd, env: ENV, encoding: 'utf8' }).stdout.trim() || null;

function userRepo(root) {
  const work = join(root, 'user');
  const remote = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', remote);
  git(remote, 'config', 'receive.denyNonFastForwards', 'true');
  mkdirSync(work);
  git(work, 'init', '-q');
  git(work, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(work, 'remote', 'add', 'origin', remote);
  return { work, remote };
}

function exportRun(root, name, minute = 0) {
  const src = join(root, `${name}.jsonl`);
  const ts = new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();
  writeFileSync(
    src,
    JSON.stringify({
      test_id: 'alpha',
      suite: 's',
      target: 'm',
      score: 1,
      timestamp: ts,
      assertions: [{ text: 'ok', passed: true }],
      answer: 'hi',
      file_changes: 'diff --git a/x b/x\n',
    }) + '\n',
  );
  const r = cli(['export', src, '--out', join(root, name), '--experiment', 'trial'], root);
  if (r.code !== 0) throw new Error(r.out);
  return join(root, name);
}

const ATT = 's/alpha/m/attempt-0';

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'agentv-trial-'));
  const counts = { inputs: 0, inputsHeld: 0, branches: 0, branchesHeld: 0, kills: 0, killsRecovered: 0, faults: 0, faultsHeld: 0 };
  const failures = [];
  try {
    writeFileSync(join(root, 'secret.txt'), `root:x:${CANARY}\n`);
    const pristine = exportRun(root, 'pristine');
    let n = 0;
    const copy = () => {
      const d = join(root, `case-${n++}`);
      cpSync(pristine, d, { recursive: true });
      return d;
    };
    const link = (d, rel) => {
      unlinkSync(join(d, rel));
      symlinkSync(join(root, 'secret.txt'), join(d, rel));
    };
    const editRow = (d, field, value) => {
      const row = JSON.parse(readFileSync(join(d, 'index.jsonl'), 'utf8').trim());
      row[field] = value;
      writeFileSync(join(d, 'index.jsonl'), JSON.stringify(row) + '\n');
    };

    // 1. Hostile inputs: (setup, command, allowed exit codes, also: nothing committed?)
    const cases = [];
    for (const rel of [`${ATT}/outputs/answer.md`, `${ATT}/outputs/file_changes.diff`, `${ATT}/grading.json`, `${ATT}/transcript.json`, 'summary.json']) {
      for (const cmd of ['report', 'summary', 'show', 'validate', 'export', 'publish'])
        cases.push({
          name: `${cmd} with linked ${rel}`,
          setup: (d) => link(d, rel),
          cmd,
          // Issue 30: the reading commands refuse a run holding a link out (summary and validate report it).
          codes: ['publish', 'report', 'show', 'export'].includes(cmd) ? [2] : [0, 1, 2],
        });
    }
    for (const [field, value] of [
      ['answer_path', '../../../../etc/passwd'],
      ['transcript_path', '/etc/passwd'],
      ['result_dir', '../x'],
      ['grading_path', 's/.git/config'],
    ]) {
      for (const cmd of ['report', 'show', 'export', 'validate', 'publish'])
        cases.push({ name: `${cmd} with ${field}=${value}`, setup: (d) => editRow(d, field, value), cmd, codes: cmd === 'validate' ? [1, 2] : [2] });
    }
    cases.push({
      name: 'report with a FIFO answer',
      setup: (d) => {
        unlinkSync(join(d, `${ATT}/outputs/answer.md`));
        execFileSync('mkfifo', [join(d, `${ATT}/outputs/answer.md`)]);
      },
      cmd: 'report',
      codes: [2],
    });
    // Round two (issue 30): the index itself linked out, a summary_path out, a sidecar missing.
    for (const cmd of ['export', 'show', 'validate', 'publish'])
      cases.push({
        name: `${cmd} with index.jsonl linked to /etc/passwd-like bytes`,
        setup: (d) => link(d, 'index.jsonl'),
        cmd,
        codes: [2],
      });
    cases.push({
      name: 'publish with summary_path=../../../../etc/passwd',
      setup: (d) => editRow(d, 'summary_path', '../../../../etc/passwd'),
      cmd: 'publish',
      codes: [2],
    });
    cases.push({
      name: 'publish with a missing answer (validate rejects it)',
      setup: (d) => unlinkSync(join(d, `${ATT}/outputs/answer.md`)),
      cmd: 'publish',
      codes: [2],
    });
    cases.push({ name: 'validate with score 42', setup: (d) => editRow(d, 'score', 42), cmd: 'validate', codes: [1] });
    mkdirSync(join(root, 'inputs'));
    const { work } = userRepo(join(root, 'inputs'));
    for (const c of cases) {
      counts.inputs++;
      const d = copy();
      c.setup(d);
      const args =
        c.cmd === 'report'
          ? ['report', d, '--out', join(root, `r${n}.html`)]
          : c.cmd === 'export'
            ? ['export', d, '--out', join(root, `e${n}`), '--skip-invalid']
            : [c.cmd, d];
      const before = tipOf(work, RESULTS);
      const r = cli(args, c.cmd === 'publish' ? work : d, {}, 20_000);
      const written = c.cmd === 'report' ? join(root, `r${n}.html`) : c.cmd === 'export' ? join(root, `e${n}`) : null;
      const leaked = r.out.includes(CANARY) || (written !== null && existsSync(written) && spawnSync('grep', ['-rq', CANARY, written]).status === 0);
      const ok = c.codes.includes(r.code) && !leaked && !/\n\s+at .*\(/.test(r.out) && (c.cmd !== 'publish' || tipOf(work, RESULTS) === before);
      if (ok) counts.inputsHeld++;
      else failures.push(`${c.name}: exit ${r.code}${leaked ? ', leaked' : ''}`);
    }
    counts.inputs++;
    const t0 = Date.now();
    const z = cli(['export', '/dev/zero', '--out', join(root, 'zero')], root, {}, 60_000);
    if (z.code === 2 && Date.now() - t0 < 60_000) counts.inputsHeld++;
    else failures.push(`export /dev/zero: exit ${z.code}`);
    // A FIFO nothing writes to: refused up front, never a hang (the 20 s timeout would say 128).
    execFileSync('mkfifo', [join(root, 'fifo.jsonl')]);
    for (const args of [
      ['export', join(root, 'fifo.jsonl'), '--out', join(root, 'fifo-out')],
      ['compare', join(root, 'fifo.jsonl'), join(root, 'fifo.jsonl')],
    ]) {
      counts.inputs++;
      const f = cli(args, root, {}, 20_000);
      if (f.code === 2) counts.inputsHeld++;
      else failures.push(`${args[0]} of a FIFO: exit ${f.code}`);
    }

    // Our branches are ours alone: a configured branch the user works on is refused, nothing moves.
    mkdirSync(join(root, 'branches'));
    const b = userRepo(join(root, 'branches'));
    git(b.work, 'checkout', '-q', '-b', 'feature');
    git(b.work, 'branch', 'release', 'HEAD');
    git(b.work, 'push', '-q', 'origin', 'HEAD:refs/heads/main', 'release');
    const refsOf = () => git(b.work, 'for-each-ref') + git(b.remote, 'for-each-ref');
    for (const [name, env, config] of [
      ['AGENTV_RESULTS_BRANCH=main', { AGENTV_RESULTS_BRANCH: 'main' }, null],
      ['AGENTV_RESULTS_ARTIFACTS_BRANCH=main', { AGENTV_RESULTS_ARTIFACTS_BRANCH: 'main' }, null],
      ['branch: release (allowed outside agentv/)', {}, 'results:\n  branch: release\n  allow_branch_outside_agentv: true\n'],
      ['branch: feature (checked out)', {}, 'results:\n  branch: feature\n  allow_branch_outside_agentv: true\n'],
    ]) {
      counts.branches++;
      rmSync(join(b.work, '.agentv'), { recursive: true, force: true });
      if (config) {
        mkdirSync(join(b.work, '.agentv'));
        writeFileSync(join(b.work, '.agentv', 'config.yaml'), config);
      }
      const before = refsOf();
      const p = cli(['publish', pristine, '--push'], b.work, env);
      if (p.code === 2 && refsOf() === before) counts.branchesHeld++;
      else failures.push(`${name}: publish exit ${p.code}`);
    }

    // 2. kill -9 during publish (seeded delays); after each, the next publish must work and the pair be consistent.
    const kills = Number(process.env.TRIAL_KILLS ?? 12);
    const r = rng(1313);
    mkdirSync(join(root, 'kills'));
    const k = userRepo(join(root, 'kills'));
    for (let i = 0; i < kills; i++) {
      counts.kills++;
      const d = exportRun(root, `k${i}`, i + 1);
      const child = spawn(process.execPath, [CLI, 'publish', d], { cwd: k.work, env: ENV, stdio: 'ignore' });
      // Listened for at once: a publish that ends before the kill must not leave this waiting forever.
      const closed = new Promise((res) => child.on('close', res));
      const delay = 100 + Math.floor(r() * 900);
      await new Promise((res) => setTimeout(res, delay));
      child.kill('SIGKILL');
      await closed;
      const again = cli(['publish', d], k.work);
      const listed = cli(['list', '--json'], k.work).out;
      const fsck = spawnSync('git', ['fsck', '--no-dangling'], { cwd: k.work, env: ENV }).status === 0;
      if (again.code === 0 && listed.includes('"experiment": "trial"') && fsck && tipOf(k.work, ARTIFACTS) !== null) counts.killsRecovered++;
      else failures.push(`kill ${i} after ${delay} ms: republish exit ${again.code} ${again.out.split('\n')[0]}`);
    }

    // 3. Remote faults: a token-bearing URL on a closed loopback port; a missing path remote.
    const srv = createServer();
    await new Promise((res) => srv.listen(0, '127.0.0.1', res));
    const port = srv.address().port;
    await new Promise((res) => srv.close(res));
    const env = { AGENTV_RESULTS_REPO: `http://u:${TOKEN}@127.0.0.1:${port}/r.git`, AGENTV_RESULTS_CACHE: join(root, 'cache') };
    const plain = join(root, 'plain');
    mkdirSync(plain);
    const outs = [
      cli(['publish', pristine, '--push'], plain, env),
      cli(['status', '--fetch', '--json'], plain, env),
      cli(['list', '--fetch'], plain, env),
      cli(['sync'], plain, env),
    ];
    counts.faults++;
    if (outs[0].code === 0 && outs.every((o) => !o.out.includes(TOKEN)) && cli(['status', '--json'], plain, env).out.includes('"pending": true'))
      counts.faultsHeld++;
    else failures.push('token URL unreachable: not committed+pending, or token printed');
    mkdirSync(join(root, 'gone'));
    const g = userRepo(join(root, 'gone'));
    git(g.work, 'remote', 'set-url', 'origin', join(root, 'nowhere.git'));
    counts.faults++;
    const gp = cli(['publish', pristine, '--push'], g.work);
    if (/origin/.test(gp.out) && /does not appear to be a git repository/.test(gp.out)) counts.faultsHeld++;
    else failures.push(`missing path remote: ${gp.out.trim().split('\n').pop()}`);
    counts.faults++;
    const lockRepo = join(root, 'lock');
    mkdirSync(lockRepo);
    const l = userRepo(lockRepo);
    cli(['publish', exportRun(root, 'l1', 50)], l.work);
    const lock = join(l.work, '.git', `${RESULTS}.lock`);
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    execFileSync('touch', ['-d', old.toISOString(), lock]);
    const lp = cli(['publish', exportRun(root, 'l2', 51)], l.work);
    if (lp.code === 0 && !existsSync(lock)) counts.faultsHeld++;
    else failures.push(`stale lock: exit ${lp.code}`);
    // A ref lock left on the remote (a push killed mid-way): named, not retried as 16 lost races.
    counts.faults++;
    cli(['publish', exportRun(root, 'rl1', 52), '--push'], l.work);
    const remoteLock = join(l.remote, `${RESULTS}.lock`);
    writeFileSync(remoteLock, '');
    const rl = cli(['publish', exportRun(root, 'rl2', 53), '--push', '--json'], l.work);
    let push = null;
    try {
      push = JSON.parse(rl.out.slice(rl.out.indexOf('{'))).push;
    } catch {}
    if (push?.classification === 'ref-locked' && push.attempts <= 3 && /stale ref lock/.test(push.message)) counts.faultsHeld++;
    else failures.push(`remote ref lock: ${push ? `${push.classification} after ${push.attempts} attempts` : `exit ${rl.code}`}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const markdown = [
    '## Trial: hostile inputs, kill -9, remote faults (bench/trial.bench.mjs)',
    '',
    'Invariants, not timings: no stack trace, documented exit code, no byte from outside the run in any output,',
    'nothing committed when publish refuses, the pair consistent and writable after each kill, no credential printed.',
    '',
    '| matrix | cases | held |',
    '| --- | ---: | ---: |',
    `| hostile inputs (links incl. the index, escaping row paths, FIFOs, /dev/zero, invalid runs, impossible scores) | ${counts.inputs} | ${counts.inputsHeld} |`,
    `| a results/artifacts branch the user works on (main, release, the checked-out one) | ${counts.branches} | ${counts.branchesHeld} |`,
    `| kill -9 during publish (seed 1313, 100-1000 ms), then republish | ${counts.kills} | ${counts.killsRecovered} |`,
    `| remote faults (token URL on a closed port, missing path remote, stale local ref lock, ref lock on the remote) | ${counts.faults} | ${counts.faultsHeld} |`,
    '',
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
  ].join('\n');
  return { markdown, counts, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown } = await run();
  process.stdout.write(markdown + '\n');
}
