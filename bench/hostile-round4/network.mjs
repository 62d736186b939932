/**
 * Hostile inputs, round four: the network groups (issue 48 items 2 and 3, and the webhook
 * observation of item 7). A group module: `run()` returns `{ groups, failures }` (each group's
 * cases tried and held) for the round-four runner; `node bench/hostile-round4/network.mjs` prints
 * the tally. Needs the build (`npm run build`).
 *
 * - silent git remotes: an http remote that accepts and never answers, one that sends headers and
 *   stops, and a git:// remote that never answers; `publish --push --require-push`, `sync`,
 *   `list --fetch` against each. Held: exit 3 naming the remote and what was waited for.
 * - a frozen S3 server (TCP accepted, no reply; or headers and stop): a hybrid publish and
 *   `storage migrate --push`. Held: exit 3 naming the bucket and its endpoint.
 * - the webhook: a URL with user:secret@ (held: the gate's exit 1, a message saying why, no
 *   secret printed), an endpoint that never answers and one that stops after its headers (held:
 *   the gate's exit 1, a warning that it did not answer).
 * - the Dashboard: 20 concurrent first opens of one test (held: each 200, one body per endpoint),
 *   and error answers (held: no path of this machine in the body).
 *
 * The limits are set small through their environment variables so a case takes seconds; every
 * process is killed by pid after BOUND ms (a hang is a case not held, never a stuck trial).
 * Loopback only, everything in a temp dir, every server stopped. Invariants, not timings.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, dashboardUrl, runBounded, TRIAL_ENV } from '../lib.mjs';

const BOUND = 60_000;
const ENV = { ...TRIAL_ENV, GIT_TERMINAL_PROMPT: '0' };
const FAST = { AGENTV_RESULTS_NET_LOW_SPEED_TIME: '2', AGENTV_RESULTS_NET_TIMEOUT: '20', AGENTV_RESULTS_S3_RETRY_SECONDS: '1' };
const CREDS = { AWS_ACCESS_KEY_ID: 'AGENTVBENCHKEY000001', AWS_SECRET_ACCESS_KEY: 'bench-s3-secret-0123456789' };

/** The CLI as a process, killed by pid past the bound; never throws. */
async function cli(args, cwd, env = {}) {
  const r = await runBounded(process.execPath, [CLI, ...args], { cwd, env: { ...ENV, ...env }, boundMs: BOUND });
  return { code: r.signal === 'SIGKILL' ? 'killed (hung)' : r.code, out: r.out, err: r.err };
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();

/** A peer on 127.0.0.1 that accepts and then says nothing (`silent`) or sends HTTP headers and stops (`headers`). */
async function silentServer(mode) {
  const sockets = new Set();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
    let answered = false;
    s.on('data', () => {
      if (mode !== 'headers' || answered) return;
      answered = true;
      s.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'agentv-hostile-r4-net-'));
  const servers = [];
  const groups = {};
  const failures = [];
  const tally = (group, held, what) => {
    groups[group] ??= { tried: 0, held: 0 };
    groups[group].tried++;
    if (held) groups[group].held++;
    else failures.push(`${group}: ${what}`);
  };
  const serve = async (mode) => {
    const s = await silentServer(mode);
    servers.push(s);
    return s;
  };
  let n = 0;
  try {
    // One run with payloads, exported once; a bare remote and a checkout that publishes into it.
    const src = join(root, 'r.jsonl');
    const row = (id, score) => ({
      test_id: id,
      suite: 's',
      target: 'm',
      score,
      timestamp: '2026-03-01T10:00:00Z',
      assertions: [{ text: 'ok', passed: score === 1 }],
      answer: `answer of ${id} `.repeat(40),
      transcript: [
        { role: 'user', content: `question ${id}` },
        { role: 'assistant', content: `answer of ${id} `.repeat(40) },
      ],
    });
    writeFileSync(src, `${[row('alpha', 1), row('beta', 0.5)].map((r) => JSON.stringify(r)).join('\n')}\n`);
    const runDir = join(root, 'run');
    await cli(['export', src, '--out', runDir], root);
    const runId = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')).run_id;
    const checkout = (url) => {
      const d = join(root, `c${n++}`);
      mkdirSync(d);
      git(d, 'init', '-q', '-b', 'main');
      git(d, 'commit', '-q', '--allow-empty', '-m', 'init');
      git(d, 'remote', 'add', 'origin', url);
      return d;
    };

    // Silent git remotes.
    const COMMANDS = [
      ['publish --push --require-push', ['publish', runDir, '--push', '--require-push']],
      ['sync', ['sync']],
      ['list --fetch', ['list', '--fetch']],
    ];
    for (const [label, mode, scheme] of [
      ['http, accepts and never answers', 'silent', 'http'],
      ['http, headers then silence', 'headers', 'http'],
      ['git://, never answers', 'silent', 'git'],
    ]) {
      const s = await serve(mode);
      const url = `${scheme}://127.0.0.1:${s.port}/remote.git`;
      const repo = checkout(url);
      for (const [name, args] of COMMANDS) {
        const r = await cli(args, repo, scheme === 'git' ? { AGENTV_RESULTS_NET_TIMEOUT: '3' } : FAST);
        const said = r.out + r.err;
        const held = r.code === 3 && said.includes(`origin (${url})`) && /stopped answering while|did not finish/.test(said);
        tally(`silent git remote (${label})`, held, `${name}: exit ${r.code}: ${said.trim().split('\n').at(-1)}`);
      }
    }

    // A frozen S3 server.
    for (const mode of ['silent', 'headers']) {
      const s = await serve(mode);
      const endpoint = `http://127.0.0.1:${s.port}`;
      const hybrid = (dir) => {
        mkdirSync(join(dir, '.agentv'), { recursive: true });
        writeFileSync(
          join(dir, '.agentv', 'config.yaml'),
          `results:\n  storage_mode: hybrid\n  object_store:\n    endpoint: ${endpoint}\n    region: us-east-1\n    bucket: frozen\n    prefix: agentv\n    force_path_style: true\n`,
        );
      };
      const bare = join(root, `remote${n++}.git`);
      git(root, 'init', '-q', '--bare', bare);
      const pub = checkout(bare);
      hybrid(pub);
      const p = await cli(['publish', runDir, '--push', '--require-push'], pub, { ...FAST, ...CREDS });
      tally(
        'frozen S3 server',
        p.code === 3 && p.err.includes(`bucket frozen at ${endpoint}`) && !p.err.includes(CREDS.AWS_SECRET_ACCESS_KEY),
        `${mode}: hybrid publish: exit ${p.code}: ${p.err.trim()}`,
      );
      const mig = checkout(bare);
      const first = await cli(['publish', runDir, '--push'], mig);
      hybrid(mig);
      const m = await cli(['storage', 'migrate', '--push'], mig, { ...FAST, ...CREDS });
      tally(
        'frozen S3 server',
        first.code === 0 && m.code === 3 && m.err.includes(`bucket frozen at ${endpoint}`),
        `${mode}: storage migrate --push: exit ${m.code} (publish ${first.code}): ${m.err.trim()}`,
      );
    }

    // The webhook, on a failing gate (exit 1 whatever the webhook does).
    const base = join(root, 'base.jsonl');
    const cand = join(root, 'cand.jsonl');
    writeFileSync(base, '{"test_id":"a","target":"m","score":1}\n{"test_id":"b","target":"m","score":1}\n');
    writeFileSync(cand, '{"test_id":"a","target":"m","score":1}\n{"test_id":"b","target":"m","score":0.2}\n');
    {
      const s = await serve('silent');
      const secret = 'hook-secret-0123';
      const r = await cli(['gate', base, cand, '--webhook', `http://u:${secret}@127.0.0.1:${s.port}/hook`], root);
      tally(
        'webhook',
        r.code === 1 && r.err.includes('has credentials in it') && !(r.out + r.err).includes(secret) && !r.err.includes('TypeError'),
        `user:secret@ URL: exit ${r.code}: ${r.err.trim()}`,
      );
      for (const mode of ['silent', 'headers']) {
        const w = await serve(mode);
        const hook = await cli(['gate', base, cand, '--webhook', `http://127.0.0.1:${w.port}/hook/path-secret`], root, { AGENTV_RESULTS_WEBHOOK_TIMEOUT: '2' });
        const said = hook.out + hook.err;
        // headers then silence: fetch resolves on the headers (a 200), so the gate counts it delivered; either way it ends.
        tally(
          'webhook',
          hook.code === 1 && !said.includes('path-secret') && (mode === 'headers' || said.includes('did not answer within 2 s')),
          `${mode} endpoint: exit ${hook.code}: ${hook.err.trim()}`,
        );
      }
    }

    // The Dashboard: concurrent first opens, and error answers.
    {
      const repo = checkout(join(root, 'nowhere.git'));
      await cli(['publish', runDir], repo);
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { cwd: repo, env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
      const kill = setTimeout(() => child.kill('SIGKILL'), 4 * BOUND);
      try {
        const url = await dashboardUrl(child);
        const enc = encodeURIComponent;
        const t = `/api/runs/${enc(runId)}/tests/alpha`;
        const paths = [`${t}?target=m`, t, `${t}?target=m&from=0`, `/api/runs/${enc(runId)}/report`];
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            fetch(`${url}${paths[i % paths.length]}`, { signal: AbortSignal.timeout(BOUND) }).then(
              async (r) => ({ path: paths[i % paths.length], status: r.status, body: await r.text() }),
              () => ({ path: paths[i % paths.length], status: 'no answer', body: '' }),
            ),
          ),
        );
        for (const a of answers) {
          const same = answers.filter((b) => b.path === a.path).every((b) => b.body === a.body);
          tally('Dashboard: 20 concurrent first opens of one test', a.status === 200 && same, `${a.path}: ${a.status} ${a.body.slice(0, 200)}`);
        }
        const bad = [`/api/runs/${enc('no-such-run')}/tests/x`, `${t}x`, `${t}?from=-1`, `/api/runs/${enc('../../etc/passwd')}`, '/api/compare?runs=a,b'];
        for (const path of bad) {
          const r = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(BOUND) }).then(
            async (x) => ({ status: x.status, body: await x.text() }),
            () => ({ status: 'no answer', body: '' }),
          );
          const leaks = [root, tmpdir(), repo].some((p) => r.body.includes(p));
          tally('Dashboard: error answers name no server path', typeof r.status === 'number' && r.status >= 400 && !leaks, `${path}: ${r.status} ${r.body}`);
        }
      } finally {
        clearTimeout(kill);
        if (child.exitCode === null) child.kill('SIGTERM');
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(root, { recursive: true, force: true });
  }
  return {
    groups,
    failures,
    notes: [
      '',
      'Network (bench/hostile-round4/network.mjs, items 2, 3, 7): silent git remotes (http that accepts and never answers, http',
      'that sends headers and stops, `git://` that never answers) under `publish --push --require-push`, `sync` and `list --fetch`;',
      'a frozen S3 server under a hybrid publish and `storage migrate --push`; the webhook with `user:secret@` in its URL and at an',
      'endpoint that never answers; 20 concurrent first opens of one test in `serve`, and five error answers. Held: exit 3 naming',
      'the remote (or bucket) and what was waited for; every open 200 with one body per endpoint; no server path in an error body.',
      'Limits set small through `AGENTV_RESULTS_NET_*`. Before this change (the trial of issue 48): the http cases were still',
      'running after 200 s, `storage migrate --push` against the frozen bucket had not ended after 420 s, the webhook said "could',
      'not be reached (TypeError)", and concurrent first opens answered 500 with the scratch path in the body.',
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { groups, failures } = await run();
  const total = Object.values(groups).reduce((a, g) => ({ tried: a.tried + g.tried, held: a.held + g.held }), { tried: 0, held: 0 });
  const lines = ['| group | tried | held |', '| --- | ---: | ---: |', ...Object.entries(groups).map(([g, c]) => `| ${g} | ${c.tried} | ${c.held} |`)];
  lines.push(
    `| **network, all** | **${total.tried}** | **${total.held}** |`,
    '',
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
