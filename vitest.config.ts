import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/cpu-report.ts'],
    // Unpack the npm registry's Chromium once, before the browser tests' workers start.
    globalSetup: ['test/helpers/chromium-setup.ts'],
    // Tests spawn real git processes, AgentV and Chromium, and wait on them and on servers: on the
    // 2-core machine a third worker fills the cores while another file waits (2 workers left them
    // half idle). The slowest suites start first, whether or not vitest has timed them before.
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // The built CLI that test/helpers/cli-in-process.ts runs inside the test process is loaded by
    // node itself, as the binary loads it, not transformed module by module.
    server: { deps: { external: [/\/dist\//] } },
  },
});
