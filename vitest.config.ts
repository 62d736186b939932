import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/cpu-report.ts'],
    // Unpack the npm registry's Chromium once, before the browser tests' workers start.
    globalSetup: ['test/helpers/chromium-setup.ts'],
    // Tests spawn real git processes and Chromium; the machine has 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // The built CLI that test/helpers/cli-in-process.ts runs inside the test process is loaded by
    // node itself, as the binary loads it, not transformed module by module.
    server: { deps: { external: [/\/dist\//] } },
  },
});
