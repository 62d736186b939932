/**
 * One way to name a run, everywhere (issue 50, item 4): every command that takes a run accepts
 * every form of a run name, through one resolver (branch-read/run-names.ts):
 *
 *   a run directory, its index.jsonl, a results .jsonl, a published run id, `<experiment>::<id>`,
 *   `<experiment>/<timestamp>` (an AgentV 4.42 run), `@<tag>`, `@latest`, `@latest:experiment=<e>`.
 *
 * One table, every run-taking command x every form, on one repository holding a run of ours at the
 * root and an AgentV 4.42 run under `runs/`. A form is accepted when the command answers 0 or 1
 * (a check that ran: validate, gate) and never says the run is not one ("not a run workspace",
 * "no such file"). `delete` and `publish` act on a run on disk: they take the local forms and
 * refuse the published ones (exit 2), without touching anything.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

isolateGitForSuite();

const TS4 = '2026-03-20T10-00-00-000Z';

/** An AgentV 4.42 run as its `agentv eval` leaves it (`.agentv/results/runs/<exp>/<ts>/`). */
async function stableRun(): Promise<string> {
  const dir = join(await makeTempDir('names-stable'), '.agentv', 'results', 'runs', 'exp4', TS4);
  const rows = ['greets', 'counts'].map((t, i) => ({
    timestamp: '2026-03-20T10:00:00.000Z',
    test_id: t,
    suite: 'demo',
    score: i === 0 ? 1 : 0,
    target: 'steady-agent',
    execution_status: 'ok',
    artifact_dir: `demo/${t}`,
    grading_path: `demo/${t}/grading.json`,
  }));
  for (const t of ['greets', 'counts']) {
    await mkdir(join(dir, 'demo', t), { recursive: true });
    await writeFile(join(dir, 'demo', t, 'grading.json'), '{"assertions":[]}\n');
  }
  await writeFile(join(dir, 'index.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return dir;
}

describe('every run-taking command accepts every form of a run name', () => {
  let work: string;
  let ws: RunWorkspace;
  /** Another run on disk: combine takes two different runs. */
  let other: RunWorkspace;
  let outs: string;
  let results: string;
  let n = 0;
  const forms: [string, () => string][] = [];

  beforeAll(async () => {
    const user = await makeUserRepo();
    work = user.work;
    outs = await makeTempDir('names-out');
    ws = await makeRunWorkspace({ experiment: 'nightly', rows: 2 });
    other = await makeRunWorkspace({ experiment: 'nightly', rows: 2, seed: 11, minute: 30 });
    expect((await cli(['publish', ws.dir, '--no-push'], work)).code).toBe(0);
    // The 4.42 run in its own layout, beside ours at the root.
    await mkdir(join(work, '.agentv'), { recursive: true });
    await writeFile(join(work, '.agentv', 'config.yaml'), 'results:\n  layout: stable\n');
    const s = await cli(['publish', await stableRun(), '--no-push', '--json'], work);
    expect(s.code, s.stderr).toBe(0);
    expect((JSON.parse(s.stdout) as { location: { path: string } }).location.path).toBe(`runs/exp4/${TS4}`);
    const list = JSON.parse((await cli(['list', '--json'], work)).stdout) as { runs: { run_id: string; experiment: string }[] };
    const ours = list.runs.find((r) => r.experiment === 'nightly')!.run_id;
    expect((await cli(['tag', ours, '+baseline'], work)).code).toBe(0);
    results = join(dirname(ws.dir), 'nightly.jsonl');
    await cp(join(dirname(ws.dir), 'results.jsonl'), results);
    const id = ours.startsWith('nightly/') ? ours.slice('nightly/'.length) : ours;
    forms.push(
      ['a run directory', () => ws.dir],
      ['its index.jsonl', () => join(ws.dir, 'index.jsonl')],
      // Named after its experiment: a results file's default experiment is its name, so it is the published run.
      ['a results .jsonl', () => results],
      ['a published run id', () => ours],
      ['<experiment>::<id>', () => `nightly::${id}`],
      ['<experiment>/<timestamp> (AgentV 4.42)', () => `exp4/${TS4}`],
      ['@<tag>', () => '@baseline'],
      ['@latest', () => '@latest'],
      ['@latest:experiment=<e>', () => '@latest:experiment=exp4'],
    );
  }, 120_000);

  const out = (ext = '') => join(outs, `out-${n++}${ext}`);
  const commands: [string, (name: string) => string[]][] = [
    ['show', (r) => ['show', r]],
    ['failures', (r) => ['failures', r]],
    ['report', (r) => ['report', r, '--out', out('.html')]],
    ['validate', (r) => ['validate', r]],
    ['summary', (r) => ['summary', r]],
    ['compare', (r) => ['compare', r, r]],
    ['gate', (r) => ['gate', r, r]],
    ['export', (r) => ['export', r, '--out', out()]],
    ['combine', (r) => ['combine', r, other.dir, '--experiment', 'combined', '--on-duplicate', 'latest', '--out', out()]],
    ['trend', (r) => ['trend', r, r]],
    ['tag', (r) => ['tag', r]],
    ['pull', (r) => ['pull', r, '--out', out()]],
    ['feedback', (r) => ['feedback', r]],
  ];

  it.each(commands)('%s', async (_name, argv) => {
    const refused: string[] = [];
    for (const [form, name] of forms) {
      const r = await cli(argv(name()), work);
      if (r.code !== 0 && r.code !== 1) refused.push(`${form} (${name()}): exit ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
      else if (/not a run workspace|no such file/i.test(r.stderr)) refused.push(`${form}: ${r.stderr.trim()}`);
    }
    expect(refused).toEqual([]);
  });

  it('show, validate and gate --json name a published run by its id, never its scratch copy (gone once they end)', async () => {
    const id = forms.find(([f]) => f === 'a published run id')![1]();
    for (const name of [id, '@baseline']) {
      for (const argv of [
        ['show', name, '--json'],
        ['validate', name, '--json'],
      ]) {
        const r = await cli(argv, work);
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
        expect((JSON.parse(r.stdout) as { dir: string }).dir, argv.join(' ')).toBe(id);
      }
      const gate = await cli(['gate', name, id, '--json'], work);
      expect(gate.code, gate.stderr).toBe(0);
      expect(gate.stdout).toContain(`"${id}/index.jsonl"`);
      expect(gate.stdout).not.toMatch(/agentv-run-names-/);
    }
  });

  it('delete and publish take a run on disk in every local form and refuse a published name, touching nothing', async () => {
    const before = await git(work, ['rev-parse', 'refs/heads/agentv/results/v1']);
    for (const [form, name] of forms.slice(3)) {
      for (const argv of [
        ['delete', '--yes', name()],
        ['publish', name(), '--no-push'],
      ]) {
        const r = await cli(argv, work);
        expect(r.code, `${argv[0]} ${form}: ${r.stdout}${r.stderr}`).toBe(2);
      }
    }
    expect(await git(work, ['rev-parse', 'refs/heads/agentv/results/v1'])).toBe(before);
    // The local forms: publish finds the run already there; delete removes a copy of it.
    for (const [form, name] of forms.slice(0, 3)) {
      const p = await cli(['publish', name(), '--no-push', '--json'], work);
      expect(p.code, `publish ${form}: ${p.stderr}`).toBe(0);
    }
    const copy = join(await makeTempDir('names-delete'), 'run');
    await cp(ws.dir, copy, { recursive: true });
    for (const target of [join(copy, 'index.jsonl')]) {
      const d = await cli(['delete', '--yes', target], work);
      expect(d.code, d.stderr).toBe(0);
    }
  });
});
