/**
 * One key style in `--json`: snake_case, as AgentV's JSON (src/cli/format.ts, jsonKeys). Every
 * command's `--json` is run on a real project with a bare remote, on a run whose target and tool
 * names are themselves camelCase: no identifier key may be camelCase, and the data keys (target
 * and tool names) must come out exactly as they went in.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/daemon/log.js';
import { JSON_DATA_KEYED_FIELDS, JSON_VERBATIM_FIELDS, jsonKeys, snakeKey } from '../src/util/json-keys.js';
import { runCli } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { isolateGitForSuite, makeUserRepoWithRemote } from './helpers/git-fixtures.js';

isolateGitForSuite();

const CAMEL = /^[a-z][a-z0-9]*[A-Z]/;

/** Identifier keys that are camelCase, by path; data-keyed maps and verbatim fields are not looked into for their keys. */
function camelKeys(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => camelKeys(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (CAMEL.test(k)) out.push(`${path}.${k}`);
    if (JSON_VERBATIM_FIELDS.has(k)) continue;
    if (JSON_DATA_KEYED_FIELDS.has(k) && v && typeof v === 'object') {
      for (const [dk, dv] of Object.entries(v)) out.push(...camelKeys(dv, `${path}.${k}[${JSON.stringify(dk)}]`));
      continue;
    }
    out.push(...camelKeys(v, `${path}.${k}`));
  }
  return out;
}

describe('jsonKeys', () => {
  it('turns camelCase identifiers into snake_case and leaves every other key alone', () => {
    expect(snakeKey('runId')).toBe('run_id');
    expect(snakeKey('remoteSeenAt')).toBe('remote_seen_at');
    expect(snakeKey('elapsedMs')).toBe('elapsed_ms');
    expect(snakeKey('remoteURL')).toBe('remote_url');
    for (const k of ['run_id', 'total', 'Read', 'gpt-5', 'claude-sonnet', 'a.b', '$schema', 'X', '']) expect(snakeKey(k)).toBe(k);
  });

  it('keeps the keys of data-keyed maps and verbatim documents, converts the values of data-keyed maps', () => {
    const doc = {
      runId: 'r',
      summary: { run_summary: { gptTurbo: { passRate: 1 } }, metadata: { gitCommit: 'abc', nested: { someKey: 1 } } },
      cases: [{ tool_calls: { total: 2, by_tool: { readFile: 1, Bash: 1 } } }],
      matrix: [{ test_id: 't', scores: { gptTurbo: 1 } }],
      rows: [{ scores: [{ scoreName: 'x' }] }],
      document: { entries: { testOne: { reviewerName: { text: 'x' } } } },
      push: { remoteTips: { results: 'a' }, elapsedMs: 3 },
    };
    expect(jsonKeys(doc)).toEqual({
      run_id: 'r',
      summary: { run_summary: { gptTurbo: { pass_rate: 1 } }, metadata: { gitCommit: 'abc', nested: { someKey: 1 } } },
      cases: [{ tool_calls: { total: 2, by_tool: { readFile: 1, Bash: 1 } } }],
      matrix: [{ test_id: 't', scores: { gptTurbo: 1 } }],
      rows: [{ scores: [{ score_name: 'x' }] }],
      document: { entries: { testOne: { reviewerName: { text: 'x' } } } },
      push: { remote_tips: { results: 'a' }, elapsed_ms: 3 },
    });
  });

  it('never overwrites: a camelCase key whose snake_case name is taken stays as it is', () => {
    expect(jsonKeys({ runId: 'a', run_id: 'b' })).toEqual({ runId: 'a', run_id: 'b' });
  });

  it('converts objects without a prototype too, and leaves values alone', () => {
    const o = Object.assign(Object.create(null) as Record<string, unknown>, { fastForwards: 1 });
    expect(jsonKeys([o, 'runId', 3, null])).toEqual([{ fast_forwards: 1 }, 'runId', 3, null]);
  });
});

describe('--log-format json (daemon, exec)', () => {
  it('writes the same key style: snake_case fields, data keys kept', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'json', write: (l) => lines.push(l), now: () => new Date(0) });
    log.warn('push failed; retrying', { retryAt: 'soon', runId: 'r', run_summary: { gptTurbo: { passRate: 1 } }, error: new Error('offline') });
    expect(JSON.parse(lines[0]!)).toEqual({
      ts: '1970-01-01T00:00:00.000Z',
      level: 'warn',
      msg: 'push failed; retrying',
      retry_at: 'soon',
      run_id: 'r',
      run_summary: { gptTurbo: { pass_rate: 1 } },
      error: 'offline',
    });
  });
});

describe("every command's --json", () => {
  let project = '';
  const RUN = '2026-11-20T09-00-00-000Z';
  const outputs = new Map<string, unknown>();

  async function json(args: string[]): Promise<unknown> {
    const r = await runCli([...args, '--json'], { cwd: project });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    const parsed = JSON.parse(r.stdout) as unknown;
    outputs.set(args.join(' '), parsed);
    return parsed;
  }

  beforeAll(async () => {
    project = (await makeUserRepoWithRemote()).work;
    // Data names in camelCase: a target and a tool.
    const rows = readFileSync(join(REPO_ROOT, 'examples/results/demo-agent.jsonl'), 'utf8')
      .replaceAll('"claude-sonnet"', '"claudeSonnet"')
      .replaceAll('"lookup_order"', '"lookupOrder"');
    writeFileSync(join(project, 'results.jsonl'), rows);
  }, 60_000);

  it('has snake_case identifier keys, and data keys as they are, on every command', async () => {
    const dir = `.agentv/results/${RUN}`;
    const exported = (await json(['export', 'results.jsonl', '--experiment', 'demo'])) as { summary: { run_summary: Record<string, unknown> } };
    expect(Object.keys(exported.summary.run_summary)).toContain('claudeSonnet');
    const published = (await json(['publish', dir, '--push'])) as Record<string, unknown>;
    expect(published).toMatchObject({ run_id: RUN, location: { run_id: RUN }, target: { results_branch: 'agentv/results/v1' } });
    expect(published.push).toMatchObject({ fast_forwards: 0, remote_tips: { results: expect.any(String) } });
    const listed = (await json(['list'])) as Record<string, unknown>;
    expect(listed).toHaveProperty('missing_from_catalog');
    expect(listed).toHaveProperty('read.remote_seen_at');
    expect(await json(['status'])).toHaveProperty('remote_url');
    await json(['summary', dir]);
    await json(['failures', dir]);
    const shown = (await json(['show', dir])) as { cases: { tool_calls: { by_tool: Record<string, number> } | null }[] };
    expect(shown.cases.flatMap((c) => Object.keys(c.tool_calls?.by_tool ?? {}))).toContain('lookupOrder');
    await json(['validate', dir]);
    await json(['compare', dir, dir]);
    // One run, its targets against each other: the matrix's scores are keyed by target name.
    const matrix = (await json(['compare', dir])) as { matrix: { scores: Record<string, number> }[] };
    expect(Object.keys(matrix.matrix[0]!.scores)).toContain('claudeSonnet');
    await json(['gate', dir, dir]);
    await json(['trend', dir, dir]);
    await json(['report', dir, '--out', 'report.html']);
    expect(await json(['tag', RUN, '+baseline'])).toMatchObject({ run_id: RUN, document: { tags: ['baseline'] } });
    await json(['tag', RUN]);
    await json(['feedback', RUN, 'refund-eligibility', 'too lenient', '--reviewer', 'ana']);
    await json(['feedback', RUN]);
    expect(await json(['pull', RUN, '--out', 'pulled', '--with-artifacts'])).toHaveProperty('run_id', RUN);
    expect(await json(['sync'])).toHaveProperty('results_branch');
    await json(['combine', dir, '--out', 'combined']);
    expect(await json(['archive', '--dry-run'])).toHaveProperty('dry_run', true);
    expect(await json(['expire', '--dry-run', '--keep-days', '100000'])).toHaveProperty('dry_run', true);
    expect(await json(['wip', 'list'])).toHaveProperty('remote_error');
    await json(['drivers', 'status']);
    await json(['autoresearch', 'record', dir, '--experiment', 'autoresearch-demo']);
    await json(['delete', 'combined', '--yes']);
    await json(['schema']);

    expect(outputs.size).toBe(27);
    for (const [cmd, out] of outputs) expect(camelKeys(out), cmd).toEqual([]);
  }, 300_000);

  it('schema <name> prints the JSON Schema itself, its keywords in their own spelling', async () => {
    const r = await runCli(['schema', 'index-row'], { cwd: project || REPO_ROOT });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"additionalProperties"');
    expect(r.stdout).not.toContain('"additional_properties"');
  });
});
