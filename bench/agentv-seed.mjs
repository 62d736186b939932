/**
 * Synthetic AgentV-written runs at scale: what AgentV 5's `auto_push` puts on the results branch
 * (`<run_id>/summary.json` in AgentV's shape with `counts` and `metadata`, `<run_id>/.internal/index.jsonl`,
 * and per-test `<test>--<hash>/` folders), no catalog line of ours, all in one fast-import. The
 * shapes follow a real `agentv eval` + `auto_push` of the sample project (6 tests, 2 targets).
 */
import { git, RESULTS_REF, RESULTS_GITATTRIBUTES, rootCommit } from './publish-lib.mjs';

const TESTS = [
  'says-42--052b856a33f6',
  'says-42--dc4b1fb2c55b',
  'greets--873d71f0141c',
  'greets--bbedfc720b7c',
  'never-passes--cb952f3d079f',
  'never-passes--d9f6f5a17b8c',
];
const TARGETS = ['flaky-agent', 'steady-agent'];
const PER_TEST = [
  'summary.json',
  'sample-1/grading.json',
  'sample-1/metrics.json',
  'sample-1/outputs/answer.md',
  'sample-1/result.json',
  'sample-1/stdout.txt',
];

function agentvSummary(runId, iso, passed) {
  const tests = TESTS.map((dir, i) => ({
    test_id: dir.split('--')[0],
    suite: 'demo',
    eval_path: 'evals/demo.eval.yaml',
    target: TARGETS[i % 2],
    total_samples: 1,
    passed_samples: i < passed ? 1 : 0,
    status_counts: { ok: 1 },
    samples: [
      {
        test_id: dir.split('--')[0],
        suite: 'demo',
        eval_path: 'evals/demo.eval.yaml',
        target: TARGETS[i % 2],
        sample_index: 1,
        status: i < passed ? 'passed' : 'failed',
        score: i < passed ? 1 : 0,
        execution_status: 'ok',
        result_dir: dir,
        summary_path: `${dir}/summary.json`,
        grading_path: `${dir}/sample-1/grading.json`,
        metrics_path: `${dir}/sample-1/metrics.json`,
        output_path: `${dir}/sample-1/outputs/answer.md`,
        duration_ms: 40 + i,
      },
    ],
  }));
  return (
    JSON.stringify(
      {
        index_path: '.internal/index.jsonl',
        run_id: runId,
        status: { passed: { count: passed, percentage: passed / 6 }, failed: { count: 6 - passed, percentage: (6 - passed) / 6 } },
        counts: { total_tests: 6, passed_tests: passed, failed_tests: 6 - passed, total_samples: 6, errored_samples: 0 },
        usage: { total_tokens: 0, input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, cost_usd: null },
        infra_failures: { total: 0, reasons: [] },
        tests,
        metadata: {
          eval_file: 'evals/demo.eval.yaml',
          timestamp: iso,
          targets: TARGETS,
          tests_run: ['greets', 'never-passes', 'says-42'],
          experiment: 'theirs',
          planned_test_count: 6,
        },
        run_summary: Object.fromEntries(TARGETS.map((t) => [t, { pass_rate: { mean: 0.5, stddev: 0.4 } }])),
        notes: [],
      },
      null,
      2,
    ) + '\n'
  );
}

function indexRow(runId, iso, dir, i, passed) {
  const p = (f) => `${dir}/${f}`;
  return JSON.stringify({
    timestamp: iso,
    test_id: dir.split('--')[0],
    suite: 'demo',
    score: i < passed ? 1 : 0,
    target: TARGETS[i % 2],
    duration_ms: 43,
    scores: [{ name: 'contains-42', type: 'contains', pass: i < passed, score: i < passed ? 1 : 0, reason: 'Grader result.', weight: 1 }],
    execution_status: 'ok',
    result_dir: dir,
    grading_path: p('sample-1/grading.json'),
    summary_path: p('summary.json'),
    output_path: p('sample-1/outputs/answer.md'),
    metrics_path: p('sample-1/metrics.json'),
    stdout_path: p('sample-1/stdout.txt'),
    run_id: runId,
  });
}

/**
 * Seeds `count` AgentV-written runs onto `refs/heads/agentv/results/v1` of `repo` (a new branch from
 * AgentV's genesis, or on top of `from`), one minute apart from `startMs`. Per-test files are shared
 * blobs; each run's summary and index are its own. Returns the tip and the run ids.
 */
export async function seedAgentvRuns(repo, { count, startMs = Date.UTC(2026, 0, 1), from = null, stepMs = 60_000, perTestFiles = 1 }) {
  const r = await git.openRepo(repo);
  const parent = from ?? (await rootCommit(r));
  const proc = git.spawnGit(['fast-import', '--quiet', '--done'], { gitDir: r.gitDir });
  proc.stdout.resume();
  const chunks = [];
  let mark = 0;
  const shared = new Map();
  for (const f of PER_TEST) {
    const data = Buffer.from(`${f}\n${'x'.repeat(200)}\n`);
    shared.set(f, ++mark);
    chunks.push(`blob\nmark :${mark}\ndata ${data.length}\n`, data, '\n');
  }
  const msg = 'seed agentv runs';
  chunks.push(`commit ${RESULTS_REF}\ncommitter Bench <bench@example.invalid> 1767225600 +0000\ndata ${msg.length}\n${msg}\nfrom ${parent}\n`);
  if (!from) chunks.push(`M 100644 inline .gitattributes\ndata ${Buffer.byteLength(RESULTS_GITATTRIBUTES)}\n${RESULTS_GITATTRIBUTES}\n`);
  const ids = [];
  for (let i = 0; i < count; i++) {
    const iso = new Date(startMs + i * stepMs).toISOString();
    const runId = iso.replace(/:/g, '-').replace('.', '-');
    ids.push(runId);
    const passed = i % 7;
    const s = agentvSummary(runId, iso, Math.min(passed, 6));
    const index = TESTS.map((d, k) => indexRow(runId, iso, d, k, Math.min(passed, 6))).join('\n') + '\n';
    chunks.push(`M 100644 inline ${runId}/summary.json\ndata ${Buffer.byteLength(s)}\n${s}\n`);
    chunks.push(`M 100644 inline ${runId}/.internal/index.jsonl\ndata ${Buffer.byteLength(index)}\n${index}\n`);
    for (const d of TESTS) for (const f of PER_TEST.slice(0, perTestFiles)) chunks.push(`M 100644 :${shared.get(f)} ${runId}/${d}/${f}\n`);
  }
  chunks.push('\ndone\n');
  for (const c of chunks) if (!proc.stdin.write(c)) await new Promise((res) => proc.stdin.once('drain', res));
  proc.stdin.end();
  await proc.exited;
  return { tip: await git.resolveRef(r, RESULTS_REF), ids };
}
