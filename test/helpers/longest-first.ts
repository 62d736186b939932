/**
 * The order test files start in. vitest runs the longest files first once it has timed them (its
 * results cache), but a fresh clone — every CI run — has no cache and starts the largest files
 * first, so a two-minute suite that happens to be small can start last and hold the whole run up.
 * The suites below are the slowest of the last measured run (BENCHMARKS.md, "Test tiers"), longest
 * first; they start before every other file, whose order vitest keeps. A stale list costs only
 * time, never a result.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOWEST = [
  'test/answers-differential.test.ts',
  'test/ci-recipes-github.test.ts',
  'test/ci-recipes-gitlab.test.ts',
  'test/sync-e2e.test.ts',
  'test/soak.slow.test.ts',
  'test/conformance/compare.test.ts',
  'test/conformance/export-dashboard.test.ts',
  'test/conformance/export-both-dashboards.test.ts',
  'test/fresh-clone.test.ts',
  'test/conformance/validate-differential.test.ts',
  'test/soak-checker.slow.test.ts',
  'test/daemon-e2e.test.ts',
  'test/conformance/export-agentv-reads.test.ts',
  'test/conformance/stable-branch.test.ts',
  'test/conformance/dashboard-differential.test.ts',
  'test/serve-dashboard-states.test.ts',
  'test/serve-browser.test.ts',
  'test/hostile-round2.test.ts',
  'test/ci-gate.test.ts',
  'test/publish-crash.slow.test.ts',
  'test/conformance/fresh-clone-auto-push.test.ts',
  'test/serve-dashboard-views.test.ts',
  'test/exec-e2e.test.ts',
  'test/storage-hybrid.test.ts',
  'test/conformance/mixed-fleet.test.ts',
  'test/conformance/shard-publish-property.test.ts',
  'test/package-install.test.ts',
  'test/wip-killloop.slow.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = SLOWEST.findIndex((p) => f.moduleId.endsWith(`/${p}`));
      return i === -1 ? SLOWEST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.f);
  }
}
