/**
 * Seeded synthetic AgentV results: N rows over M targets with realistic transcripts, tool calls,
 * graders and usage. Deterministic for a given seed, so benchmarks and tests are repeatable.
 * Our own generator: nothing here is copied from real result files.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    // xorshift32: tiny, fast, good enough for test data.
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const TOOLS = ['Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob', 'WebSearch'];
const WORDS =
  'the agent reads files runs tests fixes bug refactor module parse config retry network cache index branch merge commit review output tool call result error summary plan step'.split(
    ' ',
  );

function sentence(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join(' ');
}

/**
 * One result row. `size` scales the transcript (number of assistant turns); `i` makes ids unique.
 */
export function syntheticRow(r, i, opts = {}) {
  const targets = opts.targets ?? ['model-a', 'model-b'];
  const turns = opts.turns ?? 4;
  const testsPerSuite = opts.testsPerSuite ?? 50;
  const target = targets[i % targets.length];
  const testIndex = Math.floor(i / targets.length);
  const suite = `suite-${Math.floor(testIndex / testsPerSuite)}`;
  const score = Math.round(r() * 100) / 100;
  const output = [];
  for (let t = 0; t < turns; t++) {
    const calls = [];
    const nCalls = Math.floor(r() * 3);
    for (let c = 0; c < nCalls; c++) {
      calls.push({
        tool: TOOLS[Math.floor(r() * TOOLS.length)],
        input: { path: `src/file-${Math.floor(r() * 100)}.ts`, query: sentence(r, 6) },
        output: sentence(r, 40),
        duration_ms: Math.floor(r() * 900),
      });
    }
    output.push({ role: 'assistant', content: sentence(r, 60 + Math.floor(r() * 60)), tool_calls: calls });
  }
  const assertions = [];
  const nAssert = 2 + Math.floor(r() * 3);
  for (let a = 0; a < nAssert; a++) assertions.push({ text: `Check ${a}: ${sentence(r, 5)}`, passed: r() < score + 0.2, evidence: sentence(r, 20) });
  const start = Date.UTC(2026, 0, 1) + i * 1000;
  const inputTokens = 500 + Math.floor(r() * 5000);
  const outputTokens = 100 + Math.floor(r() * 1500);
  return {
    timestamp: new Date(start).toISOString(),
    test_id: `test-${testIndex}`,
    suite,
    target,
    score,
    execution_status: score >= 0.8 ? 'ok' : 'quality_failure',
    input: [{ role: 'user', content: sentence(r, 30) }],
    output,
    scores: [
      { name: 'correctness', type: 'llm-grader', score, weight: 1, verdict: score >= 0.8 ? 'pass' : 'fail', reasoning: sentence(r, 25), assertions },
      { name: 'format', type: 'contains', score: r() < 0.9 ? 1 : 0, weight: 0.5 },
    ],
    assertions,
    token_usage: { input: inputTokens, output: outputTokens, cached: Math.floor(r() * 200) },
    cost_usd: Math.round((inputTokens * 3 + outputTokens * 15) / 1000) / 1000,
    duration_ms: 1000 + Math.floor(r() * 60000),
    ...(i % 7 === 0 ? { file_changes: `--- a/src/a-${i}.ts\n+++ b/src/a-${i}.ts\n@@ -1 +1 @@\n-old\n+new\n` } : {}),
  };
}

/** Write rows until the file reaches about `bytes` (or exactly `rows` rows). Returns the row count. */
export async function writeSyntheticResults(path, { bytes, rows, seed = 42, ...rowOpts }) {
  const r = rng(seed);
  const out = createWriteStream(path);
  let written = 0;
  let n = 0;
  while ((rows !== undefined && n < rows) || (rows === undefined && written < bytes)) {
    const line = JSON.stringify(syntheticRow(r, n, rowOpts)) + '\n';
    written += Buffer.byteLength(line);
    n++;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return n;
}
