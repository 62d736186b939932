import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.js';
import { currentTier, FULL_ONLY, PR_ENV } from './test/tiers.mjs';

// `npm test` is the pull-request tier: every test file but test/tiers.mjs's FULL_ONLY, the slow
// suites at PR_ENV's sizes. AGENTV_TEST_TIER=all (`npm run test:all`, CI) runs every file at each
// file's own size. A test file named on the command line (`npx vitest run test/soak.slow.test.ts`)
// runs whatever its tier: the filter picks it from every file.
const tier = currentTier();
const named = process.argv.some((a) => /\.test\.ts$/.test(a));
const prSizes = Object.fromEntries(Object.entries(PR_ENV).filter(([k]) => process.env[k] === undefined));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: tier === 'all' || named ? ['**/node_modules/**'] : ['**/node_modules/**', ...FULL_ONLY],
    env: tier === 'pr' ? prSizes : {},
    setupFiles: ['test/helpers/cpu-report.ts'],
    // Refuse a stale dist/ (test/helpers/build-check.ts), make the fixture repositories every suite
    // copies once (test/helpers/fixture-templates.ts), and unpack the npm registry's Chromium once,
    // before the browser tests' workers start.
    globalSetup: ['test/helpers/build-check.ts', 'test/helpers/fixture-templates.ts', 'test/helpers/chromium-setup.ts'],
    // Tests spawn real git processes, AgentV and Chromium, and wait on them, on servers and on lock
    // staleness. On the 2-core machine the test files kept 1.55 cores busy with two workers, 1.72
    // with three and 1.75 with four (BENCHMARKS.md, "Test tiers"); every timeout is several times
    // what its test takes at four. The slowest suites start first, whether or not vitest has timed
    // them before.
    pool: 'forks',
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // A hang guard, not a measure: set for a loaded machine (two `npm test` runs at once on the two
    // cores, or a laptop busy with other work), where a test can take several times its idle time.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    reporters: ['default'],
    // The built CLI that test/helpers/cli-in-process.ts runs inside the test process is loaded by
    // node itself, as the binary loads it, not transformed module by module.
    server: { deps: { external: [/\/dist\//] } },
  },
});
