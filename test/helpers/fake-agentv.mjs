// Stand-in for `agentv eval <evals/shard-N.eval.yaml> --experiment <e>` in the simulated CI runner
// (test/helpers/ci-runner.ts): writes an AgentV run workspace under .agentv/results/ with the scores
// the test put in $FAKE_EVAL_SCORES ({ "<shard>": { "<test_id>": score | { "<target>": score } } }:
// a bare score is target `agent`), at $FAKE_EVAL_TIME. The workspace is derived by the built
// library's exportRun, what the CLI's `export` runs (verdicts at AgentV's 0.8), called in this
// process rather than as a second CLI process per shard; then laid out as AgentV 5 lays it out: its
// index in `.internal/index.jsonl`, a dot folder a CI artifact upload may drop.
// With $FAKE_AGENTV_LINE=4.42 it writes what AgentV's stable release (npm's `agentv`, 4.42.4)
// writes instead: `.agentv/results/runs/<experiment>/<timestamp>/` holding a root index.jsonl of
// its result rows (each naming its `<suite>/<test>/` folder as artifact_dir), benchmark.json and
// timing.json, no summary.json, no dot folder.
import { mkdirSync, readFileSync, renameSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [command, file, ...rest] = process.argv.slice(2);
if (command !== 'eval' || !file) {
  process.stderr.write(`fake agentv: only "eval <file>" is simulated (got ${process.argv.slice(2).join(' ')})\n`);
  process.exit(2);
}
const experiment = rest[rest.indexOf('--experiment') + 1] ?? 'default';
const shard = /shard-(\d+)/.exec(file)?.[1];
const scores = JSON.parse(readFileSync(process.env.FAKE_EVAL_SCORES, 'utf8'))[shard];
if (!scores) {
  process.stderr.write(`fake agentv: no scores for ${file}\n`);
  process.exit(1);
}
const base = Date.parse(process.env.FAKE_EVAL_TIME) + Number(shard) * 1000;
const rows = Object.entries(scores)
  .flatMap(([test_id, score]) => Object.entries(typeof score === 'number' ? { agent: score } : score).map(([target, s]) => ({ test_id, target, score: s })))
  .map(({ test_id, target, score }, i) => ({
    timestamp: new Date(base + i * 10).toISOString(),
    test_id,
    suite: 'ci',
    target,
    score,
    input: `question ${test_id}`,
    answer: `answer ${test_id}`,
  }));
const runId = new Date(base).toISOString().replace(/[:.]/g, '-');
if (process.env.FAKE_AGENTV_LINE === '4.42') {
  const out = resolve('.agentv/results/runs', experiment, runId);
  mkdirSync(out, { recursive: true });
  const stable = rows.map((r) => {
    const dir = `${r.suite}/${r.test_id}`;
    mkdirSync(join(out, dir, 'outputs'), { recursive: true });
    writeFileSync(join(out, dir, 'outputs', 'answer.md'), r.answer);
    writeFileSync(join(out, dir, 'input.md'), r.input);
    const verdict = r.score >= 0.8 ? 'pass' : 'fail';
    return {
      timestamp: r.timestamp,
      test_id: r.test_id,
      suite: r.suite,
      category: 'Uncategorized',
      score: r.score,
      target: r.target,
      duration_ms: 10,
      scores: [{ name: 'check', type: 'contains', score: r.score, weight: 1, verdict, assertions: [{ text: 'check', passed: verdict === 'pass' }] }],
      execution_status: 'ok',
      artifact_dir: dir,
      answer_path: `${dir}/outputs/answer.md`,
      input_path: `${dir}/input.md`,
      experiment,
    };
  });
  const tests = [...new Set(rows.map((r) => r.test_id))].sort();
  const targets = [...new Set(rows.map((r) => r.target))].sort();
  const metadata = { eval_file: file, timestamp: rows.at(-1).timestamp, targets, tests_run: tests, experiment, planned_test_count: rows.length };
  writeFileSync(join(out, 'benchmark.json'), JSON.stringify({ metadata, run_summary: {} }, null, 2));
  writeFileSync(join(out, 'timing.json'), JSON.stringify({ total_tokens: 0, duration_ms: 10 * rows.length }, null, 2));
  writeFileSync(join(out, 'index.jsonl'), stable.map((r) => JSON.stringify(r)).join('\n') + '\n');
  process.exit(0);
}
const tmp = mkdtempSync(join(tmpdir(), 'fake-agentv-'));
writeFileSync(join(tmp, 'results.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
mkdirSync(resolve('.agentv/results'), { recursive: true });
const out = resolve('.agentv/results', runId);
const { exportRun } = await import(new URL('../../dist/runs/export/export.js', import.meta.url).href);
await exportRun({ source: join(tmp, 'results.jsonl'), experiment, out, onWarning: (m) => process.stderr.write(`warning: ${m}\n`) });
mkdirSync(join(out, '.internal'));
renameSync(join(out, 'index.jsonl'), join(out, '.internal', 'index.jsonl'));
