/**
 * `export` of a results JSONL whose rows name files by relative path (`answer_path`,
 * `transcript_path`, as AgentV's index rows do) — issue 50, item 5: the files are read against the
 * run directory beside the file (named like the file without `.jsonl`, else the file's own
 * directory), and every path field it could not read is named: one warning per field kind with a
 * count on stderr, and `unresolved_paths` in `--json`. Before, 0 of 9 answers reached the bundle,
 * with nothing said.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDir } from './helpers/git-fixtures.js';

const rows = (n: number, paths: (i: number) => Record<string, unknown>) =>
  [...Array(n).keys()]
    .map((i) => JSON.stringify({ test_id: `t${i}`, target: 'model-a', score: 1, timestamp: `2026-03-14T10:00:0${i}.000Z`, ...paths(i) }))
    .join('\n') + '\n';

async function exported(out: string): Promise<{ answers: string[]; rows: Record<string, unknown>[] }> {
  const index = (await readFile(join(out, 'index.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const answers: string[] = [];
  for (const r of index) if (typeof r.answer_path === 'string') answers.push(await readFile(join(out, r.answer_path), 'utf8'));
  return { answers, rows: index };
}

describe('export: path fields of a results file', () => {
  it('reads answers and transcripts named by relative path from the run directory beside the file', async () => {
    const dir = await makeTempDir('export-paths');
    // <dir>/run.jsonl beside <dir>/run/<test>/...: AgentV's index rows, written as a results file.
    for (let i = 0; i < 3; i++) {
      await mkdir(join(dir, 'run', `t${i}`), { recursive: true });
      await writeFile(join(dir, 'run', `t${i}`, 'answer.md'), `answer ${i}\n`);
      await writeFile(join(dir, 'run', `t${i}`, 'transcript.json'), JSON.stringify({ messages: [{ role: 'user', content: `ask ${i}` }] }));
    }
    await writeFile(
      join(dir, 'run.jsonl'),
      rows(3, (i) => ({ answer_path: `t${i}/answer.md`, transcript_path: `./t${i}/transcript.json` })),
    );
    const out = join(dir, 'out');
    const r = await runCli(['export', join(dir, 'run.jsonl'), '--out', out, '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    expect((JSON.parse(r.stdout) as { unresolved_paths: Record<string, number> }).unresolved_paths).toEqual({});
    const { answers } = await exported(out);
    expect(answers.sort()).toEqual(['answer 0\n', 'answer 1\n', 'answer 2\n']);
  });

  it('names every path field it could not read, with a count per kind, on stderr and in --json; nothing outside the run is read', async () => {
    const dir = await makeTempDir('export-paths-missing');
    const secret = join(await makeTempDir('export-paths-outside'), 'secret.md');
    await writeFile(secret, 'outside\n');
    await mkdir(join(dir, 'present'), { recursive: true });
    await writeFile(join(dir, 'present', 'answer.md'), 'here\n');
    // Row 0 reads its answer (the file's own directory is the run: no `results/` beside it);
    // row 1's is absent, row 2's is absolute, row 3's leads out of the run. No transcript exists.
    const answer = ['present/answer.md', 'absent/answer.md', secret, '../outside/answer.md'];
    await writeFile(
      join(dir, 'results.jsonl'),
      rows(4, (i) => ({ answer_path: answer[i], transcript_path: `t${i}/transcript.json` })),
    );
    const out = join(dir, 'out');
    const r = await runCli(['export', 'results.jsonl', '--out', out, '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { unresolved_paths: Record<string, number> }).unresolved_paths).toEqual({ answer_path: 3, transcript_path: 4 });
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toEqual([
      expect.stringMatching(/^warning: answer_path: 3 rows name a file that could not be read \(looked under \.\); their content is not in the export$/),
      expect.stringMatching(/^warning: transcript_path: 4 rows name a file that could not be read/),
    ]);
    const { answers } = await exported(out);
    expect(answers).toEqual(['here\n']);
    // Without --json the same warnings go to stderr.
    const text = await runCli(['export', 'results.jsonl', '--out', join(dir, 'out2')], { cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/warning: answer_path: 3 rows/);
  });
});
