/**
 * Which test file runs in which tier: the one source of truth (CONTRIBUTING.md, "Test tiers").
 * vitest.fast.config.ts runs FAST; vitest.config.ts runs every test file but FULL_ONLY (the
 * pull-request tier, `npm test`) or, with AGENTV_TEST_TIER=all, every test file (`npm run
 * test:all`, what CI runs). test/test-hygiene.test.ts fails when a test file is in no list, in two,
 * or in a list its contents contradict (a fast file that needs a build, AgentV, a browser or a
 * process of our CLI; a conformance suite or kill loop in the pull-request tier that is not its
 * kind's representative), so a new file is placed on purpose, not by default.
 *
 * Paths are relative to the repository root. Every list is sorted.
 */

/**
 * `npm run test:fast` (and `npm test`): in-process from src/ (AGENTV_TEST_CLI=source), no build,
 * no real AgentV, no browser, no process of our CLI; at most 60 CPU-seconds together.
 */
export const FAST = [
  'test/adopt-runs-unit.test.ts',
  'test/agentv-branch-layout.test.ts',
  'test/architecture.test.ts',
  'test/attempts-unit.test.ts',
  'test/cli-flags-from-schema.test.ts',
  'test/daemon-outbox.test.ts',
  'test/derive-unit.test.ts',
  'test/gate-noise-sim.test.ts',
  'test/git-merge-tree.test.ts',
  'test/git-refs.test.ts',
  'test/git-repo.test.ts',
  'test/git-runner.test.ts',
  'test/hostile-stream.test.ts',
  'test/live-doors.test.ts',
  'test/merge-driver.test.ts',
  'test/merge-json.test.ts',
  'test/merge-jsonl.test.ts',
  'test/merge-properties.test.ts',
  'test/merge-tree-resolve.test.ts',
  'test/read-layouts.test.ts',
  'test/report-unit.test.ts',
  'test/run-names-messages.test.ts',
  'test/sync-merge.test.ts',
  'test/sync-unit.test.ts',
  'test/verb-doors.test.ts',
  'test/verbs-fast.test.ts',
  'test/wip-checkpoint.test.ts',
];

/**
 * `npm run test:all` only (CI): every conformance differential but one per AgentV line, the CI
 * recipe simulations, the soak, the kill loops, the full mixed fleet, the browser suites but one,
 * the hostile matrices whose every case starts processes, the end-to-end stories whose kind the
 * pull-request tier covers more cheaply (sync-e2e, exec-e2e, storage-blip). Each has a
 * representative of its kind in the pull-request tier (PR_REPRESENTATIVES).
 */
export const FULL_ONLY = [
  'test/answers-differential.test.ts',
  'test/autoresearch.test.ts',
  'test/ci-gate-agentv.test.ts',
  'test/ci-recipes-github.test.ts',
  'test/ci-recipes-gitlab.test.ts',
  'test/conformance/agentv-summary-merge.test.ts',
  'test/conformance/branch-two-writers.test.ts',
  'test/conformance/client-smoke.test.ts',
  'test/conformance/compare.test.ts',
  'test/conformance/config-spellings.test.ts',
  'test/conformance/dashboard-differential.test.ts',
  'test/conformance/export-agentv-reads.test.ts',
  'test/conformance/export-both-dashboards.test.ts',
  'test/conformance/export-dashboard.test.ts',
  'test/conformance/fresh-clone-auto-push.test.ts',
  'test/conformance/fresh-clone-stable.test.ts',
  'test/conformance/gate-history-agentv.test.ts',
  'test/conformance/hybrid-dashboard.test.ts',
  'test/conformance/mixed-fleet.test.ts',
  'test/conformance/repeat-runs.test.ts',
  'test/conformance/shallow-shard-publish.test.ts',
  'test/conformance/shard-publish-property.test.ts',
  'test/conformance/stable-assert-set.test.ts',
  'test/conformance/stable-branch.test.ts',
  'test/conformance/validate-differential.test.ts',
  'test/exec-e2e.test.ts',
  'test/fresh-clone.test.ts',
  'test/hostile-round2.test.ts',
  'test/hostile-round3.test.ts',
  'test/overlays-views.test.ts',
  'test/package-install-git.slow.test.ts',
  'test/report-browser.test.ts',
  'test/report-scale.test.ts',
  'test/serve-autoresearch.test.ts',
  'test/serve-dashboard-states.test.ts',
  'test/serve-dashboard-views.test.ts',
  'test/serve-transcript-pages.test.ts',
  'test/site-browser.test.ts',
  'test/soak-checker.slow.test.ts',
  'test/soak.slow.test.ts',
  'test/storage-blip.test.ts',
  'test/sync-e2e.test.ts',
  'test/validate-equals-publish-agentv5.test.ts',
  'test/wip-killloop.slow.test.ts',
];

/**
 * `npm test` beyond FAST: the built CLI as a user runs it, real git remotes and servers, one
 * conformance file per AgentV line, one browser file, one kill loop at a small size.
 */
export const PR = [
  'test/api-docs.test.ts',
  'test/archive-cli.test.ts',
  'test/archive-listing.test.ts',
  'test/archive-network.test.ts',
  'test/archive-sharded.test.ts',
  'test/archive.test.ts',
  'test/build-stamp.test.ts',
  'test/ci-gate.test.ts',
  'test/cli-broken-pipe.test.ts',
  'test/cli-bundle.test.ts',
  'test/cli-harness.test.ts',
  'test/cli-json-keys.test.ts',
  'test/cli-parser.test.ts',
  'test/cli-progress.test.ts',
  'test/conformance/read-agentv-run.test.ts',
  'test/conformance/read-stable-run.test.ts',
  'test/daemon-e2e.test.ts',
  'test/daemon-instance-lock.test.ts',
  'test/disk-full.test.ts',
  'test/docs.test.ts',
  'test/error-model.test.ts',
  'test/exit-codes-corrupt.test.ts',
  'test/export-e2e.test.ts',
  'test/export-path-warnings.test.ts',
  'test/feedback.test.ts',
  'test/fetch-fallback.test.ts',
  'test/fresh-reads.test.ts',
  'test/gate-history.test.ts',
  'test/git-objects.test.ts',
  'test/git-ref-snapshot.test.ts',
  'test/git-remote.test.ts',
  'test/hostile-cli.test.ts',
  'test/hostile-files.test.ts',
  'test/hostile-lock.test.ts',
  'test/hostile-remote.test.ts',
  'test/library-is-cli.test.ts',
  'test/list-catalog-cache.test.ts',
  'test/list-overlays.test.ts',
  'test/net-silent.test.ts',
  'test/output-target.test.ts',
  'test/package-install.test.ts',
  'test/public-api.test.ts',
  'test/publish-agentv-run.test.ts',
  'test/publish-config.test.ts',
  'test/publish-crash.slow.test.ts',
  'test/publish-list.test.ts',
  'test/publish-network.test.ts',
  'test/publish-pull.test.ts',
  'test/publish-safety.test.ts',
  'test/publish-status.test.ts',
  'test/pull-batch.test.ts',
  'test/quickstart.test.ts',
  'test/results-combine.test.ts',
  'test/results-compare.test.ts',
  'test/results-delete.test.ts',
  'test/results-inspect.test.ts',
  'test/results-trend.test.ts',
  'test/results-validate.test.ts',
  'test/retention-cli.test.ts',
  'test/retention-network.test.ts',
  'test/retention.test.ts',
  'test/run-handle.test.ts',
  'test/run-identity.test.ts',
  'test/run-names-table.test.ts',
  'test/serve-api.test.ts',
  'test/serve-browser.test.ts',
  'test/serve-concurrent.test.ts',
  'test/serve-one-run.test.ts',
  'test/site-budget.test.ts',
  'test/site-paths.test.ts',
  'test/site-resume.test.ts',
  'test/skill-creator-compat.test.ts',
  'test/stable-layout.test.ts',
  'test/status-remote-sync-branches.test.ts',
  'test/storage-hybrid.test.ts',
  'test/sync-adopt-agentv.test.ts',
  'test/sync-adopt-checkpoints.test.ts',
  'test/sync-adopt-hostile.test.ts',
  'test/sync-cli.test.ts',
  'test/sync-derived.test.ts',
  'test/test-hygiene.test.ts',
  'test/util-shared.test.ts',
  'test/validate-equals-publish.test.ts',
  'test/wip-diskfull.test.ts',
  'test/wip-end.test.ts',
  'test/wip-recover.test.ts',
  'test/wip-safety.test.ts',
  'test/writer-agnostic.test.ts',
];

/**
 * The pull-request tier keeps one file of every kind of check; the hygiene test holds these to
 * FAST or PR. A kind whose representative moves to FULL_ONLY needs another one named here.
 */
export const PR_REPRESENTATIVES = {
  'conformance, AgentV 5.x': 'test/conformance/read-agentv-run.test.ts',
  'conformance, AgentV 4.42.4': 'test/conformance/read-stable-run.test.ts',
  'browser (Chromium)': 'test/serve-browser.test.ts',
  'kill -9 loop (small: AGENTV_CRASH_ITERATIONS below)': 'test/publish-crash.slow.test.ts',
  'hostile input': 'test/hostile-files.test.ts',
  'CI gate': 'test/ci-gate.test.ts',
  'object store (S3 server)': 'test/storage-hybrid.test.ts',
  'concurrent writers and sync': 'test/sync-cli.test.ts',
  'WIP daemon and exec': 'test/daemon-e2e.test.ts',
  'the packed package': 'test/package-install.test.ts',
  'docs and public API': 'test/docs.test.ts',
  'every verb from source': 'test/verbs-fast.test.ts',
};

/**
 * The sizes the pull-request tier runs the slow suites at (the full tier takes each file's own
 * default); an explicit environment variable wins over both.
 */
export const PR_ENV = {
  AGENTV_CRASH_ITERATIONS: '3',
};

/** Conformance suites that may run in the pull-request tier: one per AgentV line. */
export const PR_CONFORMANCE = [PR_REPRESENTATIVES['conformance, AgentV 5.x'], PR_REPRESENTATIVES['conformance, AgentV 4.42.4']];

/** The tier a run of vitest.config.ts is: `all` with AGENTV_TEST_TIER=all, else `pr`. */
export function currentTier(env = process.env) {
  const t = env.AGENTV_TEST_TIER ?? 'pr';
  if (t !== 'pr' && t !== 'all') throw new Error(`AGENTV_TEST_TIER=${t}: expected "pr" (npm test) or "all" (npm run test:all)`);
  return t;
}
