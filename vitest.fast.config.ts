import { defineConfig } from 'vitest/config';

// `npm run test:fast`: the unit tier, for everyday work (under a minute). Pure functions and small
// real-git plumbing; no CLI processes, browsers, network remotes or kill loops, and no build: the
// few commands it runs are run in-process from src/ (AGENTV_TEST_CLI=source), so it never tests a
// stale dist/. `npm test` runs these and everything else, against the build.
export default defineConfig({
  test: {
    include: [
      'test/architecture.test.ts',
      'test/derive-unit.test.ts',
      'test/attempts-unit.test.ts',
      'test/gate-noise-sim.test.ts',
      'test/merge-*.test.ts',
      'test/report-unit.test.ts',
      'test/sync-unit.test.ts',
      'test/sync-merge.test.ts',
      'test/daemon-outbox.test.ts',
      'test/git-runner.test.ts',
      'test/git-refs.test.ts',
      'test/git-merge-tree.test.ts',
      'test/git-repo.test.ts',
      'test/read-layouts.test.ts',
      'test/hostile-stream.test.ts',
      'test/wip-checkpoint.test.ts',
      'test/agentv-branch-layout.test.ts',
    ],
    env: { AGENTV_TEST_CLI: 'source' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
