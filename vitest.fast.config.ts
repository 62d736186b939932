import { defineConfig } from 'vitest/config';
import { FAST } from './test/tiers.mjs';

// `npm run test:fast`: the tier for the edit-test loop, test/tiers.mjs's FAST list (at most 60
// CPU-seconds). Every verb runs in-process from src/ (AGENTV_TEST_CLI=source), so it needs no build
// and never tests a stale dist/; no real AgentV, no browser, no process of our CLI. `npm test`
// runs these too.
export default defineConfig({
  test: {
    include: FAST,
    env: { AGENTV_TEST_CLI: 'source' },
    setupFiles: ['test/helpers/cpu-report.ts'],
    globalSetup: ['test/helpers/fixture-templates.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Set for a loaded machine: the whole tier takes under a minute of CPU.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
