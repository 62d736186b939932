/**
 * `validate` is at least as strict as AgentV's `results validate` (issue 24 item 3): both judge
 * corrupted copies of one real run `agentv eval` wrote — each sidecar deleted, each path field
 * pointed outside the run, truncated JSON, wrong types, duplicate lines, counts that disagree —
 * and every copy AgentV rejects, ours rejects too. Ours rejects more (a path out of the run whose
 * target exists, which AgentV accepts), never less.
 */
import { cp, mkdir, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { ROW_PATH_FIELDS } from '../../src/model/path-segments.js';
import { mapLimit } from '../../src/util/map-limit.js';
import { agentvEval, describeWithAgentV, makeSampleProject, runAgentV } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';

type Variant = { name: string; corrupt: (dir: string) => Promise<void> };

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  }
  return out.sort();
}

describeWithAgentV('validate against agentv results validate on corrupted real runs', () => {
  isolateGitForSuite();
  let runDir = '';
  let scratch = '';
  const variants: Variant[] = [];

  const manifest = (dir: string) => join(dir, '.internal', 'index.jsonl');
  const editLine = (n: number, edit: (row: Record<string, unknown>) => void) => async (dir: string) => {
    const lines = (await readFile(manifest(dir), 'utf8')).split('\n');
    const row = JSON.parse(lines[n]!) as Record<string, unknown>;
    edit(row);
    lines[n] = JSON.stringify(row);
    await writeFile(manifest(dir), lines.join('\n'));
  };

  beforeAll(async () => {
    const project = await makeSampleProject();
    runDir = await agentvEval(project, { experiment: 'diff' });
    scratch = await makeTempDir('agentv-validate-diff');
    await writeFile(join(scratch, 'outside.json'), '{"pass":true,"score":1,"reason":"outside"}');
    const first = JSON.parse((await readFile(manifest(runDir), 'utf8')).split('\n')[0]!) as Record<string, unknown>;
    const testDir = first.result_dir as string;

    // Each file of one test deleted, and the run's own summary.json.
    for (const f of (await filesUnder(join(runDir, testDir))).map((f) => `${testDir}/${f}`))
      variants.push({ name: `deleted ${f}`, corrupt: (d) => unlink(join(d, f)) });
    variants.push({ name: 'deleted summary.json', corrupt: (d) => unlink(join(d, 'summary.json')) });
    // Each path field of the first row pointed outside the run: at nothing, and at a real file.
    // Both for the fields AgentV reads; for the others (AgentV never opens them) one target is enough.
    const outside = `${'../'.repeat(8)}${scratch.slice(1)}/outside.json`;
    for (const field of ROW_PATH_FIELDS.filter((f) => typeof first[f] === 'string')) {
      const read = ['result_dir', 'summary_path', 'grading_path', 'metrics_path'].includes(field);
      for (const target of read ? ['../../../no-such-file.json', outside] : [outside]) {
        variants.push({
          name: `${field} -> ${target.includes('outside') ? 'an existing file outside' : 'a missing path outside'}`,
          corrupt: editLine(0, (row) => {
            row[field] = target;
          }),
        });
      }
    }
    // Truncated JSON: a manifest line, a grading, a metrics, the run summary.
    variants.push({
      name: 'truncated manifest line',
      corrupt: async (d) => {
        const lines = (await readFile(manifest(d), 'utf8')).split('\n');
        lines[1] = lines[1]!.slice(0, 40);
        await writeFile(manifest(d), lines.join('\n'));
      },
    });
    for (const field of ['grading_path', 'metrics_path', 'summary_path'] as const) {
      variants.push({
        name: `truncated ${field}`,
        corrupt: async (d) => {
          const p = join(d, first[field] as string);
          await writeFile(p, (await readFile(p, 'utf8')).slice(0, 20));
        },
      });
    }
    variants.push({
      name: 'truncated summary.json',
      corrupt: async (d) => writeFile(join(d, 'summary.json'), (await readFile(join(d, 'summary.json'), 'utf8')).slice(0, 30)),
    });
    // Wrong types and missing fields.
    for (const [name, edit] of [
      ['score as a string', (r: Record<string, unknown>) => (r.score = '1')],
      ['score 2', (r: Record<string, unknown>) => (r.score = 2)],
      ['score missing', (r: Record<string, unknown>) => delete r.score],
      ['test_id missing', (r: Record<string, unknown>) => delete r.test_id],
      ['target missing', (r: Record<string, unknown>) => delete r.target],
      ['summary_path missing', (r: Record<string, unknown>) => delete r.summary_path],
      ['scores[0] not an object', (r: Record<string, unknown>) => (r.scores = [5])],
      ['grading_path a number', (r: Record<string, unknown>) => (r.grading_path = 7)],
    ] as const)
      variants.push({ name, corrupt: editLine(0, edit) });
    variants.push({
      name: 'grading.json without pass/score/reason',
      corrupt: async (d) => writeFile(join(d, first.grading_path as string), JSON.stringify({ verdict: 'pass' })),
    });
    // Duplicate lines and counts that disagree.
    variants.push({
      name: 'a duplicated manifest line',
      corrupt: async (d) => {
        const text = await readFile(manifest(d), 'utf8');
        await writeFile(manifest(d), text.trimEnd() + '\n' + text.split('\n')[0] + '\n');
      },
    });
    variants.push({
      name: 'summary.json counts that disagree',
      corrupt: async (d) => {
        const s = JSON.parse(await readFile(join(d, 'summary.json'), 'utf8')) as Record<string, unknown>;
        s.total = 99;
        await writeFile(join(d, 'summary.json'), JSON.stringify(s));
      },
    });
    variants.push({ name: 'an empty manifest', corrupt: (d) => writeFile(manifest(d), '') });
  }, 120_000);

  it('the untouched run is valid for both', async () => {
    expect((await runAgentV(['results', 'validate', runDir], { cwd: runDir })).code).toBe(0);
    const mine = await runCli(['validate', runDir], { cwd: runDir });
    expect(mine.code, mine.stdout + mine.stderr).toBe(0);
  });

  it('every corrupted copy AgentV rejects, ours rejects', async () => {
    const rows: string[] = [];
    const missed: string[] = [];
    let theyRejected = 0;
    const dirs = variants.map((_, i) => join(scratch, `v${i}`, '.agentv', 'results', runDir.split('/').pop()!));
    // AgentV's judge is a process that mostly waits to start: four at a time. Ours runs in this
    // process (one command at a time), after.
    const theirCodes = await mapLimit(variants, 4, async (v, i) => {
      // AgentV reads runs only under .agentv/results/<run_id>; keep that shape.
      await mkdir(join(dirs[i]!, '..'), { recursive: true });
      await cp(runDir, dirs[i]!, { recursive: true });
      await v.corrupt(dirs[i]!);
      const theirs = await runAgentV(['results', 'validate', dirs[i]!], { cwd: dirs[i]! });
      return { code: theirs.code, says: (theirs.stderr + theirs.stdout).trim() };
    });
    for (const [i, v] of variants.entries()) {
      const theirs = theirCodes[i]!;
      const mine = await runCli(['validate', dirs[i]!], { cwd: dirs[i]! });
      rows.push(`${v.name}: agentv ${theirs.code === 0 ? 'valid' : 'rejected'}, ours ${mine.code === 0 ? 'valid' : 'rejected'} (exit ${mine.code})`);
      if (theirs.code !== 0) {
        theyRejected++;
        if (mine.code === 0) missed.push(`${v.name}\n  agentv: ${theirs.says}`);
        // A rejection is a finding (exit 1) or a refused input (exit 2), never a crash.
        expect([1, 2], `${v.name}: ${mine.stderr}`).toContain(mine.code);
      }
      expect(mine.stderr, v.name).not.toMatch(/\n\s+at .*\(/);
      await rm(join(scratch, `v${i}`), { recursive: true, force: true });
    }
    console.log(`validate differential, ${variants.length} variants, ${theyRejected} rejected by AgentV:\n${rows.join('\n')}`);
    expect(theyRejected).toBeGreaterThan(10);
    expect(missed, missed.join('\n')).toEqual([]);
  }, 600_000);
});
