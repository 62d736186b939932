/**
 * Issue 48's hostile group "disk" (round four): a full disk, a read-only filesystem and a kill -9,
 * under publish, sync, WIP checkpoints, the daemon's outbox, the catalog cache and `site`.
 *   node bench/hostile-round4/disk.mjs      (prints the tally and its Markdown)
 *   import { run } from './disk.mjs'        (the round's runner: { markdown, groups, failures })
 *
 * One real tmpfs (mount -t tmpfs, as root; where mounting is not permitted every case is reported
 * as not run, and under CI=true that is a failure), filled with ballast to leave a chosen number of
 * bytes free (0 to 512 KiB), or remounted read-only. A case holds when:
 *  - the command exits 0 and did all of its work, or exits 3 saying "no space left" / "read-only";
 *  - after a failure nothing half-written is left as truth: no ref moved, `git fsck` clean, no
 *    outbox record lost or half there, no site manifest, no catalog cache file read back;
 *  - after the space comes back (ballast removed, or remounted read-write) the same command
 *    completes, and what it wrote equals what a command on a roomy disk writes (runs listed, rows,
 *    the site's files and manifest);
 *  - a `site` killed with SIGKILL once N of its files exist is completed by the next `site`, equal
 *    to a clean build.
 * Invariants, not timings; every process is killed by pid after BOUND ms. Loopback only, temp dirs.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, runBounded, TRIAL_ENV } from '../lib.mjs';

const BOUND = 120_000;
const ENV = { ...TRIAL_ENV };
const DEMO = join(ROOT, 'examples', 'results', 'demo-agent.jsonl');
/** Bytes left free under each command (0: a full disk). */
const LEAVE = process.env.DISK_QUICK ? [0] : [0, 4 << 10, 16 << 10, 64 << 10, 192 << 10, 512 << 10];
const KILL_AT = [1, 3, 6, 12];

/** One process, killed by pid after BOUND ms. */
async function proc(cmd, args, cwd) {
  const r = await runBounded(cmd, args, { cwd, env: ENV, boundMs: BOUND });
  return { code: r.code ?? (r.signal ? 128 : 1), out: r.out, err: r.err };
}
const cli = (args, cwd) => proc(process.execPath, [CLI, ...args], cwd);
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const ref = (cwd, r) => {
  try {
    return git(cwd, 'rev-parse', '-q', '--verify', r);
  } catch {
    // rev-parse --verify exits 1 for a ref that does not exist: the answer, not a failure
    return null;
  }
};
const fsckClean = (cwd) => spawnSync('git', ['fsck', '--no-dangling', '--no-progress'], { cwd, env: ENV, encoding: 'utf8' }).status === 0;
const RESULTS = 'refs/heads/agentv/results/v1';
const ARTIFACTS = 'refs/heads/agentv/artifacts/v1';
/** The first entry where two `files()` answers differ (for the report of a case not held). */
const firstDiff = (a, b) => {
  const x = JSON.parse(a);
  const y = JSON.parse(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (JSON.stringify(x[i]) !== JSON.stringify(y[i])) return `${JSON.stringify(x[i])?.slice(0, 300)} vs ${JSON.stringify(y[i])?.slice(0, 300)}`;
  return 'none';
};
const saidDisk = (r) => /no space left|read-only/i.test(r.out + r.err);

/** Every file under `dir` with its sha256 (the site manifest as its parsed content), sorted. */
function files(dir) {
  const found = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else {
        const b = readFileSync(join(dir, r));
        found.push([
          r,
          r === '.agentv-site.json'
            ? sortKeys(withoutReadTime(JSON.parse(b.toString('utf8'))))
            : r === CATALOG
              ? sortKeys({ ...JSON.parse(b.toString('utf8')), read: null })
              : createHash('sha256').update(b).digest('hex'),
        ]);
      }
    }
  };
  walk('');
  return JSON.stringify(found.sort(([a], [b]) => (a < b ? -1 : 1)));
}
/** The listing's index says when the branch was read (`read`): a build's own time, so compared without it. */
const CATALOG = 'api/catalog/index.json';
function withoutReadTime(manifest) {
  if (manifest?.files?.[CATALOG]) manifest.files[CATALOG] = null;
  return manifest;
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  return v;
}

/** The tmpfs: mount, ballast that leaves `leave` bytes, read-only, unmount. */
function tmpfs(dir, size) {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  const ballast = join(dir, 'ballast');
  return {
    mounted: r.status === 0,
    why: r.error?.message ?? (r.stderr ?? '').trim(),
    fill(leave) {
      mkdirSync(ballast, { recursive: true });
      const sizes = [];
      let n = 0;
      for (const size of [256 << 10, 16 << 10, 1 << 10, 64]) {
        for (;;) {
          try {
            writeFileSync(join(ballast, `f${n}`), Buffer.alloc(size, 1));
            sizes[n++] = size;
          } catch (err) {
            if (err.code !== 'ENOSPC') throw err;
            break;
          }
        }
      }
      let given = 0;
      for (let i = sizes.length - 1; i >= 0 && given < leave; i--) {
        rmSync(join(ballast, `f${i}`));
        given += sizes[i];
      }
      if (given > leave) writeFileSync(join(ballast, 'refill'), Buffer.alloc(given - leave, 1));
    },
    free: () => rmSync(ballast, { recursive: true, force: true }),
    ro: () => execFileSync('mount', ['-o', 'remount,ro', dir]),
    rw: () => execFileSync('mount', ['-o', 'remount,rw', dir]),
    unmount: () => spawnSync('umount', ['-l', dir]),
  };
}

export async function run() {
  let killedMidway = 0;
  const groups = {};
  const failures = [];
  const tally = (group, ok, what) => {
    groups[group] ??= { tried: 0, held: 0 };
    const g = groups[group];
    g.tried++;
    if (ok) g.held++;
    else failures.push(`${group}: ${what}`);
  };
  const root = mkdtempSync(join(tmpdir(), 'hostile-disk-'));
  const mnt = join(root, 'mnt');
  mkdirSync(mnt);
  const fs = tmpfs(mnt, '16m');
  if (!fs.mounted) {
    rmSync(root, { recursive: true, force: true });
    const why = `cannot mount a tmpfs here (${fs.why || 'not permitted'})`;
    if (process.env.CI === 'true') throw new Error(`${why}; under CI the disk group must run`);
    return { markdown: `## Hostile inputs, round four: a full disk\n\nNot run: ${why}.`, groups, failures: [why] };
  }
  try {
    // The shared remote and a roomy machine's clone; the run exported once (a workspace for checkpoints).
    const remote = join(root, 'remote.git');
    git(root, 'init', '-q', '--bare', remote);
    git(remote, 'config', 'receive.denyNonFastForwards', 'true');
    const roomy = join(root, 'roomy');
    git(root, 'clone', '-q', remote, roomy);
    const work = join(root, 'ws');
    const exported = await cli(['export', DEMO, '--out', work], root);
    if (exported.code !== 0) throw new Error(`export failed: ${exported.err}`);
    // Other machines' runs: the demo run on other days (distinct run ids).
    const dayOf = (day) => {
      const file = join(root, `day-${day}.jsonl`);
      writeFileSync(file, readFileSync(DEMO, 'utf8').replaceAll('2026-11-20T', `2026-11-${day}T`));
      return file;
    };

    // publish: each level of free space, then read-only.
    for (const leave of [...LEAVE, 'ro']) {
      const c = join(mnt, 'pub');
      git(mnt, 'clone', '-q', remote, c);
      if (leave === 'ro') fs.ro();
      else fs.fill(leave);
      let r;
      try {
        r = await cli(['publish', DEMO], c);
      } finally {
        if (leave === 'ro') fs.rw();
        else fs.free();
      }
      const moved = ref(c, RESULTS) !== null;
      tally(
        'publish',
        (r.code === 0 && moved && ref(c, ARTIFACTS) !== null) || (r.code === 3 && saidDisk(r) && !moved && ref(c, ARTIFACTS) === null),
        `leave ${leave}: exit ${r.code} ${r.err.slice(0, 200)}`,
      );
      tally('publish', fsckClean(c), `leave ${leave}: fsck`);
      const again = await cli(['publish', DEMO], c);
      const listed = JSON.parse((await cli(['list', '--json'], c)).out || '{"runs":[]}').runs.length;
      tally('publish', again.code === 0 && listed === 1, `leave ${leave}: after space: exit ${again.code}, ${listed} runs`);
      rmSync(c, { recursive: true, force: true });
    }

    // sync: another machine pushed a run; this clone holds one of its own; the disk fills.
    const pushed = await cli(['publish', dayOf(21), '--push', '--require-push'], roomy);
    if (pushed.code !== 0) throw new Error(`roomy publish failed: ${pushed.err}`);
    const remoteRuns = () =>
      JSON.parse(execFileSync(process.execPath, [CLI, 'list', '--json', '--fetch'], { cwd: roomy, env: ENV, encoding: 'utf8' })).runs.length;
    for (const leave of [...LEAVE, 'ro']) {
      const c = join(mnt, 'sync');
      git(mnt, 'clone', '-q', '--no-checkout', remote, c);
      // This clone starts before the other machine's push: its own run only.
      git(c, 'update-ref', '-d', 'refs/remotes/origin/agentv/results/v1');
      git(c, 'update-ref', '-d', 'refs/remotes/origin/agentv/artifacts/v1');
      const mine = await cli(['publish', DEMO], c);
      const local = ref(c, RESULTS);
      const before = ref(remote, RESULTS);
      const beforeArtifacts = ref(remote, ARTIFACTS);
      if (leave === 'ro') fs.ro();
      else fs.fill(leave);
      let r;
      try {
        r = await cli(['sync'], c);
      } finally {
        if (leave === 'ro') fs.rw();
        else fs.free();
      }
      const ok = r.code === 0 ? ref(remote, RESULTS) !== before : r.code === 3 && saidDisk(r) && ref(c, RESULTS) === local && ref(remote, RESULTS) === before;
      tally('sync', mine.code === 0 && ok, `leave ${leave}: exit ${r.code} ${(r.out + r.err).slice(-400)}`);
      tally('sync', fsckClean(c), `leave ${leave}: fsck`);
      const again = await cli(['sync'], c);
      tally('sync', again.code === 0 && remoteRuns() === 2, `leave ${leave}: after space: exit ${again.code}`);
      // The remote back to the other machine's run alone for the next level (a bare repo: its ref set back).
      git(remote, 'update-ref', RESULTS, before);
      git(remote, 'update-ref', ARTIFACTS, beforeArtifacts);
      rmSync(c, { recursive: true, force: true });
    }

    // WIP checkpoints: the repository on the tmpfs, the workspace off it.
    for (const leave of [...LEAVE, 'ro']) {
      const c = join(mnt, 'wip');
      git(mnt, 'init', '-q', '-b', 'main', c);
      if (leave === 'ro') fs.ro();
      else fs.fill(leave);
      let r;
      try {
        r = await cli(['wip', 'checkpoint', work, '--no-push', '--dir', c], c);
      } finally {
        if (leave === 'ro') fs.rw();
        else fs.free();
      }
      const branches = git(c, 'for-each-ref', '--format=%(refname)', 'refs/heads/agentv/wip/');
      tally(
        'wip checkpoint',
        (r.code === 0 && branches !== '') || (r.code === 3 && saidDisk(r) && branches === ''),
        `leave ${leave}: exit ${r.code} ${r.err.slice(0, 200)}`,
      );
      tally('wip checkpoint', fsckClean(c), `leave ${leave}: fsck`);
      const again = await cli(['wip', 'checkpoint', work, '--no-push', '--dir', c, '--json'], c);
      const rows = again.code === 0 ? JSON.parse(again.out).at(-1)?.result?.rows : -1;
      tally('wip checkpoint', again.code === 0 && rows === 8, `leave ${leave}: after space: exit ${again.code}, ${rows} rows`);
      rmSync(c, { recursive: true, force: true });
    }

    // The daemon's outbox: records until the disk refuses; every acknowledged record is there after.
    const { Outbox } = await import(join(ROOT, 'dist', 'daemon', 'outbox.js'));
    for (const leave of [...LEAVE, 'ro']) {
      const file = join(mnt, 'ob', 'agentv-results', 'outbox.jsonl');
      const ob = new Outbox(file);
      await ob.put({ kind: 'push-results' });
      const acked = ['push-results'];
      if (leave === 'ro') fs.ro();
      else fs.fill(leave);
      let err = null;
      try {
        for (let i = 0; i < 2000 && err === null; i++) {
          err = await ob.put({ kind: 'publish', run_dir: `/r${i}`, run_id: `e/r${i}`, wip_ref: null }).then(
            () => {
              acked.push(`publish:/r${i}`);
              return null;
            },
            (e) => e,
          );
        }
      } finally {
        if (leave === 'ro') fs.rw();
        else fs.free();
      }
      // Past the loop's bound with room left is no failure: the bound, not the disk, ended it.
      tally(
        'outbox',
        err === null ? leave !== 0 && leave !== 'ro' : err.cliExitCode === 3 && /no space left|read-only/.test(err.message),
        `leave ${leave}: ${err?.message}`,
      );
      const pending = (await ob.pending()).map((i) => i.id).sort();
      tally('outbox', JSON.stringify(pending) === JSON.stringify([...acked].sort()), `leave ${leave}: ${pending.length} pending, ${acked.length} acknowledged`);
      await ob.put({ kind: 'publish', run_dir: '/after', run_id: 'e/after', wip_ref: null });
      tally('outbox', (await ob.pending()).length === acked.length + 1, `leave ${leave}: after space`);
      rmSync(join(mnt, 'ob'), { recursive: true, force: true });
    }

    // The catalog cache: a best-effort write, never read back torn.
    const cache = await import(join(ROOT, 'dist', 'results-branch', 'read', 'catalog-cache.js'));
    const { openRepo } = await import(join(ROOT, 'dist', 'git', 'index.js'));
    {
      const c = join(mnt, 'cat');
      git(mnt, 'init', '-q', '-b', 'main', c);
      const repo = await openRepo(c);
      const key = cache.cacheKey([{ tip: 'a'.repeat(40), where: 'local' }], undefined);
      const runs = Array.from({ length: cache.CACHE_MIN_RUNS }, (_, i) => ({
        run_id: `e/r${i}`,
        experiment: 'e',
        timestamp: `2026-01-01T00:00:00.${i}Z`,
        targets: ['t'],
        path: `r${i}`,
        where: 'local',
      }));
      const facets = { experiments: ['e'], targets: ['t'] };
      for (const leave of [...LEAVE, 'ro']) {
        if (leave === 'ro') fs.ro();
        else fs.fill(leave);
        let threw = false;
        try {
          await cache.saveCatalogRead(repo, key, { runs, unreadable: 0 }, facets).catch(() => (threw = true));
        } finally {
          if (leave === 'ro') fs.rw();
          else fs.free();
        }
        const back = await cache.loadCatalogRead(repo, key, 'all');
        tally('catalog cache', !threw && (back === null || back.runs.length === runs.length), `leave ${leave}: threw ${threw}, read back ${back?.runs.length}`);
        const dir = join(repo.commonDir, 'agentv-results', 'catalog-reads');
        tally('catalog cache', !existsSync(dir) || readdirSync(dir).every((n) => n.endsWith('.bin')), `leave ${leave}: a temporary file left`);
        rmSync(join(repo.commonDir, 'agentv-results'), { recursive: true, force: true });
      }
      rmSync(c, { recursive: true, force: true });
    }

    // site: the repository off the tmpfs (the roomy clone has the other machine's run; two more here), the output on it.
    for (const day of [22, 23]) await cli(['publish', dayOf(day)], roomy);
    const clean = join(root, 'site-clean');
    const built = await cli(['site', '--out', clean], roomy);
    if (built.code !== 0) throw new Error(`clean site failed: ${built.err}`);
    const want = files(clean);
    for (const leave of [...LEAVE, 'ro']) {
      const out = join(mnt, 'site');
      mkdirSync(out);
      if (leave === 'ro') fs.ro();
      else fs.fill(leave);
      let r;
      try {
        r = await cli(['site', '--out', out], roomy);
      } finally {
        if (leave === 'ro') fs.rw();
        else fs.free();
      }
      const manifest = existsSync(join(out, '.agentv-site.json'));
      tally(
        'site',
        (r.code === 0 && files(out) === want) || (r.code === 3 && saidDisk(r) && !manifest),
        `leave ${leave}: exit ${r.code} ${r.err.slice(0, 200)}`,
      );
      const again = await cli(['site', '--out', out], roomy);
      const got = files(out);
      tally('site', again.code === 0 && got === want, `leave ${leave}: after space: exit ${again.code} ${again.err.slice(0, 200)} ${firstDiff(got, want)}`);
      rmSync(out, { recursive: true, force: true });
    }

    // site killed with SIGKILL once N of its files exist (a positive signal), then site again.
    killedMidway = 0;
    for (const n of KILL_AT) {
      const out = join(root, `site-kill-${n}`);
      const child = spawn(process.execPath, [CLI, 'site', '--out', out], { cwd: roomy, env: ENV, stdio: 'ignore' });
      let done = false;
      const exited = new Promise((ok) =>
        child.on('close', () => {
          done = true;
          ok();
        }),
      );
      const deadline = Date.now() + BOUND;
      const count = () => {
        try {
          return readdirSync(out, { recursive: true }).length;
        } catch {
          // not made yet
          return 0;
        }
      };
      while (!done && Date.now() < deadline && count() < n) await new Promise((r) => setTimeout(r, 2));
      if (!done) child.kill('SIGKILL');
      await exited;
      const midway = !existsSync(join(out, '.agentv-site.json'));
      if (midway) killedMidway++;
      const again = await cli(['site', '--out', out], roomy);
      tally(
        'site killed (kill -9)',
        again.code === 0 && files(out) === want,
        `at ${n} files (killed before its manifest: ${midway}): exit ${again.code} ${again.err.slice(0, 200)}`,
      );
    }
  } finally {
    try {
      spawnSync('mount', ['-o', 'remount,rw', mnt]);
    } finally {
      fs.unmount();
      rmSync(root, { recursive: true, force: true });
    }
  }
  const total = Object.values(groups).reduce((a, g) => ({ tried: a.tried + g.tried, held: a.held + g.held }), { tried: 0, held: 0 });
  const markdown = [
    '### A full disk and a read-only filesystem (bench/hostile-round4/disk.mjs, issue 48 items 5 and 6)',
    '',
    `Each command on a real tmpfs filled to leave ${LEAVE.map((b) => (b === 0 ? '0' : `${b >> 10} KiB`)).join(', ')} free, then remounted read-only;`,
    `\`site\` also killed with SIGKILL once ${KILL_AT.join(', ')} of its files existed. Held: exit 0 with all of its work done, or exit 3`,
    'saying "no space left" / "read-only" with no ref moved, fsck clean, no outbox record lost, no cache file or',
    'site manifest trusted; then, with the space back, the same command completes and equals a roomy run.',
    '',
    '| group | tried | held |',
    '| --- | ---: | ---: |',
    ...Object.entries(groups).map(([g, c]) => `| ${g} | ${c.tried} | ${c.held} |`),
    `| **all** | **${total.tried}** | **${total.held}** |`,
    '',
    `The kills landed before the build's manifest in ${killedMidway} of ${KILL_AT.length} cases. Before this change: a \`site\` killed`,
    'half-way was refused by the next one ("not a site agentv-results built", exit 2); a read-only filesystem under `site` was',
    'exit 70, "internal error"; the outbox waited out its lock\'s retries (about 13 s) on a read-only filesystem; git\'s refused',
    "writes during `sync` and checkpoints came in git's words only.",
    '',
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
  ].join('\n');
  return { markdown, groups, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown } = await run();
  process.stdout.write(markdown + '\n');
}
