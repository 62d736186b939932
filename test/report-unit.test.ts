import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { escapeHtml, jsonForScript } from '../src/report/escape.js';
import { barWidth, histogramBarHeight, histogramBins, scoreHistogram, targetPassRateChart, BAR_CHART } from '../src/report/charts.js';
import { SecretScanner, secretKinds } from '../src/report/secrets.js';
import { cutAt, oneLine, TextBudget } from '../src/report/text.js';
import { computeStats } from '../src/report/stats.js';
import { testAssertions } from '../src/model/grading.js';
import { CONTENT_SECURITY_POLICY, renderReport } from '../src/report/template.js';
import type { ReportData, ReportDetail, ReportTest } from '../src/report/types.js';

const HOSTILE = [
  '<script>alert(1)</script>',
  '</script><script>alert(2)</script>',
  '</SCRIPT ><script>alert(3)</script>',
  '"><img src=x onerror=alert(4)>',
  "'><svg onload=alert(5)>",
  '<a href="javascript:alert(6)">x</a>',
  '<!--',
  '<!-- <script>alert(7)</script> -->',
  '-->',
  'line\u2028separator\u2029paragraph',
  '&lt;already-escaped&gt; &amp;',
  '\u0000nul and \ud800 lone surrogate',
];

function test(over: Partial<ReportTest> = {}): ReportTest {
  return {
    id: 't',
    group: 0,
    target: 0,
    attempt: 0,
    variant: null,
    verdict: 'pass',
    score: 1,
    duration_ms: 1000,
    tokens: 10,
    cost_usd: 0.01,
    prompt: '',
    prompt_kind: 'none',
    assertions: [1, 1],
    ...over,
  };
}

function detail(over: Partial<ReportDetail> = {}): ReportDetail {
  return {
    execution_status: 'ok',
    error: null,
    assertions: [],
    graders: [],
    tool_calls: {},
    changes: null,
    messages: [],
    omitted_messages: 0,
    answer: null,
    answer_in_transcript: false,
    diff: null,
    ...over,
  };
}

function reportData(tests: ReportTest[], over: Partial<ReportData> = {}): ReportData {
  return {
    version: 1,
    run: { run_id: 'exp/2026', experiment: 'exp', timestamp: null },
    limits: { field_chars: 20000, test_chars: 100000, prompt_chars: 200 },
    groups: [{ suite: 's', eval_path: null }],
    targets: ['m'],
    tests,
    ...over,
  };
}

describe('escaping', () => {
  it('escapeHtml neutralises markup and attribute breakouts', () => {
    expect(escapeHtml('<a href="x" title=\'y\'>&</a>')).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    for (const s of HOSTILE) expect(escapeHtml(s)).not.toMatch(/[<>"']/);
  });

  it('jsonForScript never emits <, >, &, U+2028 or U+2029 and round-trips to the same value', () => {
    const value = { list: HOSTILE, nested: { [HOSTILE[0]!]: HOSTILE[1] }, n: 1.5, ok: true, none: null };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text.toLowerCase()).not.toContain('</script');
    expect(text).not.toContain('<!--');
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
    expect(text).toContain('\\u003c/script\\u003e');
    expect(text).toContain('\\u2028');
  });

  it('the rendered document has exactly our three script elements whatever the data', () => {
    const hostile = HOSTILE.join(' ');
    const data = reportData([test({ id: hostile, prompt: hostile })], {
      groups: [{ suite: hostile, eval_path: hostile }],
      targets: [hostile],
      run: { run_id: hostile, experiment: hostile, timestamp: hostile },
    });
    const html = [
      ...renderReport({ data, details: [detail({ error: hostile, messages: [{ role: hostile, content: hostile, tools: [] }] })], stats: computeStats(data) }),
    ].join('');
    expect(html.match(/<script/gi)).toHaveLength(3);
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<svg onload');
    expect(html).not.toMatch(/<a[\s>]/);
    // Only the CSP's own comment-free markup: a data `<!--` would have been escaped.
    expect(html).not.toContain('<!--');
  });
});

describe('content security policy', () => {
  it('forbids every remote load and pins the inline script and style by hash', () => {
    const directives = Object.fromEntries(
      CONTENT_SECURITY_POLICY.split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v]),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['img-src']).toEqual(['data:']);
    expect(directives['connect-src']).toBeUndefined();
    expect(directives['font-src']).toBeUndefined();
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|https?:|\*/);
    const data = reportData([test()]);
    const html = [...renderReport({ data, details: [detail()], stats: computeStats(data) })].join('');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    expect(directives['script-src']).toEqual([hash(script)]);
    expect(directives['style-src']).toEqual([hash(style)]);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY.replace(/'/g, '&#39;')}">`);
  });

  it('is deterministic: the same data gives the same bytes', () => {
    const data = reportData([test(), test({ id: 'u', verdict: 'fail', score: 0.2 })]);
    const render = () => [...renderReport({ data, details: [detail(), detail()], stats: computeStats(data) })].join('');
    expect(render()).toBe(render());
  });
});

describe('secret scan', () => {
  it('recognises keys, bearer tokens, private keys and home directories', () => {
    expect(secretKinds('key sk-proj-abcdefghijklmnop1234')).toEqual(['api_key']);
    expect(secretKinds('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc')).toEqual(['bearer_token']);
    expect(secretKinds('-----BEGIN OPENSSH PRIVATE KEY-----\nabc')).toEqual(['private_key']);
    expect(secretKinds('-----BEGIN RSA PRIVATE KEY-----')).toEqual(['private_key']);
    expect(secretKinds('opened /home/alice/project/a.ts')).toEqual(['local_path']);
    expect(secretKinds('cd /Users/bob && ls')).toEqual(['local_path']);
    expect(secretKinds('C:\\Users\\carol\\repo')).toEqual(['local_path']);
  });

  it('ignores look-alikes', () => {
    for (const s of [
      'ask-me-anything',
      'sk-short',
      'a bearer of news',
      'src/app/home/page.tsx',
      '-----BEGIN PUBLIC KEY-----',
      '/homework/x',
      'task-abcdefghijklmnopqrstuvwxyz',
    ]) {
      expect(secretKinds(s), s).toEqual([]);
    }
  });

  it('warns per kind with the test ids and never repeats the secret', () => {
    const scanner = new SecretScanner();
    const secret = 'sk-ant-api03-SECRETSECRETSECRET0000';
    scanner.scan('leaky-1', { messages: [{ content: `use ${secret}` }] });
    scanner.scan('leaky-2', 'token', ['nested', { deep: secret }]);
    scanner.scan('clean', 'nothing here');
    scanner.scan('path-test', '/home/alice/x');
    const warnings = scanner.warnings();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('API key');
    expect(warnings[0]).toContain('2 tests: leaky-1, leaky-2');
    expect(warnings[1]).toContain('local path');
    expect(warnings[1]).toContain('path-test');
    expect(warnings.join('\n')).not.toContain('SECRET');
    expect(warnings.join('\n')).not.toContain('alice');
  });

  it('shows control characters in test ids as escapes, so a warning cannot drive the terminal', () => {
    const scanner = new SecretScanner();
    scanner.scan('evil\u001b]0;pwned\u0007id', '/Users/bob');
    const [warning] = scanner.warnings();
    expect(warning).toContain('evil\\u001b]0;pwned\\u0007id');
    expect(warning).not.toMatch(/[\u0000-\u001f]/);
  });

  it('lists at most ten test ids', () => {
    const scanner = new SecretScanner();
    for (let i = 0; i < 25; i++) scanner.scan(`t${i}`, '-----BEGIN EC PRIVATE KEY-----');
    expect(scanner.warnings()[0]).toMatch(/25 tests: t0, .*t9, … \(\+15 more\)/);
  });
});

describe('charts', () => {
  it('bins scores into ten bins, the last one including 1, clamping outliers', () => {
    expect(histogramBins([0, 0.05, 0.1, 0.5, 0.99, 1, 1, -0.3, 1.7, Number.NaN])).toEqual([3, 1, 0, 0, 0, 1, 0, 0, 0, 4]);
    expect(histogramBins([], 4)).toEqual([0, 0, 0, 0]);
    expect(histogramBins([0.25, 0.5, 0.75], 4)).toEqual([0, 1, 1, 1]);
  });

  it('scales bars to the tallest bin and the pass rate', () => {
    expect(histogramBarHeight(5, 10, 100)).toBe(50);
    expect(histogramBarHeight(1, 3, 100)).toBe(33.3);
    expect(histogramBarHeight(0, 0, 100)).toBe(0);
    expect(barWidth(2, 3, 300)).toBe(200);
    expect(barWidth(1, 3, 290)).toBe(96.7);
    expect(barWidth(0, 0, 300)).toBe(0);
    expect(barWidth(5, 3, 300)).toBe(300);
  });

  it('histogram SVG carries each bin count and proportional heights', () => {
    const svg = scoreHistogram([0.1, 0.1, 0.1, 0.1, 0.9, 0.95]);
    const counts = [...svg.matchAll(/data-bin="(\d+)" data-count="(\d+)"/g)].map((m) => Number(m[2]));
    expect(counts).toEqual([0, 4, 0, 0, 0, 0, 0, 0, 0, 2]);
    const heights = [...svg.matchAll(/<rect class="bar [a-z]+" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights[1]).toBeCloseTo(2 * heights[9]!, 0);
    expect(svg).toContain('>4</text>');
  });

  it('target bars show pass counts and escape the target names', () => {
    const svg = targetPassRateChart([
      { name: 'gpt-4o', passed: 2, total: 3 },
      { name: '<script>alert(1)</script>', passed: 0, total: 4 },
    ]);
    expect(svg).toContain('data-passed="2" data-total="3"');
    expect(svg).toContain('66.7% (2/3)');
    expect(svg).toContain('0.0% (0/4)');
    expect(svg).toContain(`width="${barWidth(2, 3, BAR_CHART.width - BAR_CHART.labelWidth - BAR_CHART.valueWidth)}"`);
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
  });

  it('caps the number of target rows', () => {
    const bars = Array.from({ length: 45 }, (_, i) => ({ name: `t${i}`, passed: i, total: 45 }));
    const svg = targetPassRateChart(bars);
    expect(svg.match(/class="bar-row"/g)).toHaveLength(BAR_CHART.maxRows);
    expect(svg).toContain('and 5 more targets');
  });
});

describe('text budget and stats', () => {
  it('clips fields and the per-test total, remembering the original size', () => {
    const budget = new TextBudget(10, 25);
    expect(budget.clip('short')).toBe('short');
    expect(budget.clip('é'.repeat(30))).toEqual({ head: 'é'.repeat(10), bytes: 60 });
    expect(budget.clip('0123456789abc')).toEqual({ head: '0123456789', bytes: 13 });
    expect(budget.exhausted).toBe(true);
    expect(budget.clip('more')).toEqual({ head: '', bytes: 4 });
    expect(budget.truncated).toBe(3);
  });

  it('never splits a surrogate pair and folds prompts to one line', () => {
    expect(cutAt('ab😀cd', 3)).toBe('ab');
    expect(cutAt('ab😀cd', 4)).toBe('ab😀');
    expect(oneLine('  hello\n\n  world  ', 50)).toBe('hello world');
    expect(oneLine('x'.repeat(300), 10)).toBe('x'.repeat(9) + '…');
  });

  it('folds totals like summary.json: failed excludes errors', () => {
    const data = reportData(
      [
        test({ verdict: 'pass', score: 1, cost_usd: 0.1 }),
        test({ verdict: 'fail', score: 0.5, duration_ms: null, cost_usd: 0.2 }),
        test({ verdict: 'error', score: 0, tokens: null, target: 1, group: 1 }),
      ],
      {
        targets: ['a', 'b'],
        groups: [
          { suite: 's', eval_path: null },
          { suite: 'u', eval_path: 'u.yaml' },
        ],
      },
    );
    const s = computeStats(data);
    expect(s.overall).toMatchObject({ total: 3, passed: 1, failed: 1, errors: 1, duration_ms: 2000, tokens: 20, cost_usd: 0.31 });
    expect(s.overall.pass_rate).toBeCloseTo(1 / 3);
    expect(s.overall.mean_score).toBeCloseTo(0.5);
    expect(s.targets.map((t) => t.total)).toEqual([2, 1]);
    expect(s.groups.map((t) => t.errors)).toEqual([0, 1]);
  });
});

describe("a test's assertions (one definition: report, failures, 4.42's grading.json)", () => {
  const own = [
    { text: 'no grader owns this', passed: false, evidence: 'why' },
    { text: 'nor this', passed: true },
  ];
  // AgentV's tree: one component per grader, its leaf labelled by the grader's name.
  const tree = { component_results: [{ pass: true, score: 1, reason: 'ok', assertion: { name: 'judge', type: 'llm_grader' } }] };

  it("is result.json's expectations whatever grading.json's tree holds", () => {
    expect(testAssertions({ expectations: own, scores: [] }, tree)).toEqual([
      { text: 'no grader owns this', passed: false, evidence: 'why' },
      { text: 'nor this', passed: true, evidence: '' },
    ]);
  });

  it("falls back to grading.json for a bundle without our result.json (its expectations, else the tree's leaves)", () => {
    expect(testAssertions(null, { expectations: own })).toHaveLength(2);
    expect(testAssertions({ scores: [] }, tree)).toEqual([{ text: 'judge', passed: true, evidence: 'ok' }]);
    expect(testAssertions(null, null)).toBeNull();
  });
});
