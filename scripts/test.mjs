#!/usr/bin/env node
/**
 * `npm test`: the build, then the lint, the typecheck of the tests and browser clients, and every
 * test, the last three side by side. The tests run the build (dist/), so it comes first; the lint
 * and the typecheck need nothing from the tests and use one core each for about a minute, while the
 * suite leaves part of the two cores idle (its tests wait on git daemons, servers and browsers), so
 * running them beside it takes them off the suite's critical path instead of adding to it.
 *
 * The lint's and typecheck's output is held and printed after the tests, each under its own
 * heading; the exit code is the first failure's (lint, typecheck, tests), or 0. Arguments are
 * passed to vitest (`npm test -- test/docs.test.ts`).
 *
 * `--all` (`npm run test:all`, what CI runs) runs the whole matrix instead of the pull-request tier
 * (AGENTV_TEST_TIER=all: test/tiers.mjs's FULL_ONLY files too, the slow suites at their own sizes).
 */
import { spawn } from 'node:child_process';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs a command; with `quiet`, its output is kept and returned instead of printed. */
function run(cmd, args, { quiet = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', env });
    const chunks = [];
    if (quiet) {
      child.stdout.on('data', (c) => chunks.push(c));
      child.stderr.on('data', (c) => chunks.push(c));
    }
    child.on('error', (err) => resolve({ code: 127, output: `${cmd}: ${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output: Buffer.concat(chunks).toString('utf8') }));
  });
}

const args = process.argv.slice(2);
const all = args.includes('--all');
const vitestArgs = args.filter((a) => a !== '--all');

const build = await run(npm, ['run', '-s', 'build']);
if (build.code !== 0) process.exit(build.code);

const checks = [
  { name: 'lint (biome ci)', done: run(npm, ['run', '-s', 'lint'], { quiet: true }) },
  { name: 'typecheck of the tests and browser clients', done: run(npm, ['run', '-s', 'typecheck:tests'], { quiet: true }) },
];
const tests = await run('npx', ['vitest', 'run', ...vitestArgs], { env: all ? { ...process.env, AGENTV_TEST_TIER: 'all' } : process.env });

let code = 0;
for (const check of checks) {
  const r = await check.done;
  const text = r.output.trimEnd();
  process.stdout.write(`\n${check.name}: ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`}\n${text && r.code !== 0 ? `${text}\n` : ''}`);
  if (r.code !== 0 && code === 0) code = r.code;
}
if (tests.code !== 0 && code === 0) code = tests.code;
process.exit(code);
