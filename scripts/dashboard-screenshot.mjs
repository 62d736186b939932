#!/usr/bin/env node
/**
 * Writes docs/dashboard.png, the README's picture of the Dashboard: a throwaway project with a
 * local bare remote, five nightly and smoke runs derived from the bundled example (the same tests
 * and targets, other days and scores), published and pushed, then `serve` on 127.0.0.1 shot by
 * the headless Chromium the tests use (scripts/chromium.mjs). Run after `npm run build`:
 *
 *   node scripts/dashboard-screenshot.mjs [out.png]
 *
 * Nothing outside its temporary directory and the output file is written.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { runGit } from '../dist/git/index.js';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist/cli/main.js');
const out = resolve(process.argv[2] ?? join(root, 'docs/dashboard.png'));
const identity = { GIT_AUTHOR_NAME: 'Dashboard', GIT_AUTHOR_EMAIL: 'dashboard@example.invalid', GIT_COMMITTER_NAME: 'Dashboard', GIT_COMMITTER_EMAIL: 'dashboard@example.invalid' };
Object.assign(process.env, identity);

function agentv(args, cwd) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'ignore', 'inherit'], env: process.env });
  if (r.status !== 0) throw new Error(`agentv-results ${args.join(' ')} exited ${r.status}`);
}

const work = await mkdtemp(join(tmpdir(), 'agentv-results-dashboard-'));
let server;
try {
  const remote = join(work, 'remote.git');
  const project = join(work, 'project');
  await runGit(['init', '--bare', '-q', '-b', 'main', remote]);
  await runGit(['init', '-q', '-b', 'main', project]);
  await writeFile(join(project, 'README.md'), '# demo agent\n');
  await runGit(['add', 'README.md'], { cwd: project });
  await runGit(['commit', '-q', '-m', 'Initial commit'], { cwd: project });
  await runGit(['remote', 'add', 'origin', remote], { cwd: project });

  const example = (await readFile(join(root, 'examples/results/demo-agent.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  // [experiment, day of November 2026, hour, score shift]: scores move a little from run to run.
  const runs = [
    ['nightly', 16, '02', -0.2],
    ['nightly', 17, '02', -0.1],
    ['smoke', 17, '14', 0],
    ['nightly', 18, '02', 0.05],
    ['nightly', 19, '02', 0.1],
  ];
  for (const [experiment, day, hour, shift] of runs) {
    const rows = example.map((r) => ({
      ...r,
      timestamp: r.timestamp.replace('2026-11-20T09', `2026-11-${day}T${hour}`),
      score: Math.max(0, Math.min(1, Math.round((r.score + shift) * 100) / 100)),
    }));
    const file = join(work, `${experiment}-${day}T${hour}.jsonl`);
    await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    agentv(['publish', file, '--experiment', experiment, '--push'], project);
  }
  agentv(['tag', '2026-11-18T02-00-00-000Z', '+baseline'], project);

  const child = spawn(process.execPath, [cli, 'serve', '--port', '0'], { cwd: project, stdio: ['ignore', 'ignore', 'pipe'] });
  server = child;
  const url = await new Promise((resolveUrl, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no Dashboard line within 60 s: ${err}`)), 60_000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.on('close', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });

  const browser = await chromium.launch({ executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForFunction(
      () => document.querySelectorAll('#runs-body tr[data-run]').length >= 5 && document.querySelector('[data-field="sync_status"]')?.textContent === 'clean',
    );
    await page.screenshot({ path: out, fullPage: false });
  } finally {
    await browser.close();
  }
  process.stdout.write(`wrote ${out}\n`);
} finally {
  if (server?.pid) {
    server.removeAllListeners('close');
    process.kill(server.pid, 'SIGTERM');
  }
  await rm(work, { recursive: true, force: true });
}
