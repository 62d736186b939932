import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/cpu-report.ts'],
    // Unpack the npm registry's Chromium once, before the browser tests' workers start.
    globalSetup: ['test/helpers/chromium-setup.ts'],
    // Tests spawn real git processes, AgentV and Chromium, and wait on them, on servers and on lock
    // staleness. On the 2-core machine the test files kept 1.55 cores busy with two workers, 1.72
    // with three and 1.75 with four (BENCHMARKS.md, "Test tiers"); every timeout is several times
    // what its test takes at four. The slowest suites start first, whether or not vitest has timed
    // them before.
    pool: 'forks',
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // A hang guard, not a measure: the suites that run beside each other (two AgentV Dashboards, the
    // recipe simulations, the soak) can triple a test's time on the two cores.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    // The built CLI that test/helpers/cli-in-process.ts runs inside the test process is loaded by
    // node itself, as the binary loads it, not transformed module by module.
    server: { deps: { external: [/\/dist\//] } },
  },
});
