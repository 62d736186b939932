/**
 * validate = publish for runs in AgentV 5.x's own layout (issue 40, item 3): the pointers AgentV 5.x
 * writes in its per-sample files — result.json (its own fields and `target_execution.artifacts`),
 * target-execution.json (`artifacts`), metrics.json (`source_artifacts`) — and the run summary's
 * `index_path` are checked as a row's paths are: relative, inside the run. Such a run was "✓ valid"
 * and published as it was, even without --allow-invalid (AgentV's layout is published as written).
 * One real `agentv eval` makes the run; each case spoils a copy of it.
 */
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, makeSampleProject } from './helpers/agentv-client.js';
import { isolateGitForSuite } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

type Doc = Record<string, unknown>;

async function editJson(file: string, edit: (doc: Doc) => void): Promise<void> {
  const doc = JSON.parse(await readFile(file, 'utf8')) as Doc;
  edit(doc);
  await writeFile(file, JSON.stringify(doc, null, 2));
}

/** The first sample folder of the run (`<test>--<hash>/sample-1`), where AgentV writes result.json. */
async function firstSample(run: string): Promise<string> {
  const tests = (await readdir(run, { withFileTypes: true })).filter((e) => e.isDirectory() && e.name.includes('--')).map((e) => e.name);
  return join(run, tests.sort()[0]!, 'sample-1');
}

const CASES: { name: string; spoil: (run: string) => Promise<void>; says: RegExp }[] = [
  {
    name: 'result.json grading_path naming /etc/passwd',
    spoil: async (run) => editJson(join(await firstSample(run), 'result.json'), (d) => (d.grading_path = '/etc/passwd')),
    says: /sample-1\/result\.json: grading_path "\/etc\/passwd" points outside the run/,
  },
  {
    name: 'result.json target_execution.artifacts climbing out with ../',
    spoil: async (run) =>
      editJson(join(await firstSample(run), 'result.json'), (d) => {
        (d.target_execution as { artifacts: Doc }).artifacts.stdout_path = '../../../../etc/passwd';
      }),
    says: /sample-1\/result\.json: target_execution\.artifacts\.stdout_path "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" points outside the run/,
  },
  {
    name: 'target-execution.json artifacts naming /etc/passwd',
    spoil: async (run) =>
      editJson(join(await firstSample(run), 'target-execution.json'), (d) => {
        (d.artifacts as Doc).transcript_path = '/etc/passwd';
      }),
    says: /sample-1\/target-execution\.json: artifacts\.transcript_path "\/etc\/passwd" points outside the run/,
  },
  {
    name: 'metrics.json source_artifacts climbing out with ../',
    spoil: async (run) =>
      editJson(join(await firstSample(run), 'metrics.json'), (d) => {
        (d.source_artifacts as Doc).grading_path = '../../../outside.json';
      }),
    says: /sample-1\/metrics\.json: source_artifacts\.grading_path "\.\.\/\.\.\/\.\.\/outside\.json" points outside the run/,
  },
];

describeWithAgentV('validate = publish on AgentV 5.x runs: pointers inside its per-sample files', () => {
  let pristine = '';
  let base = '';
  beforeAll(async () => {
    const project = await makeSampleProject();
    pristine = await agentvEval(project, { experiment: 'pointers' });
    base = join(project, '..');
  });

  it('each spoiled pointer: validate names it (exit 1), publish and publish --allow-invalid refuse it (exit 2) and store nothing; the pristine run publishes', async () => {
    const user = await makeUserRepo();
    for (const [i, c] of CASES.entries()) {
      const run = join(base, `case-${i}`, 'results', '2026-03-01T10-00-00-000Z');
      await cp(pristine, run, { recursive: true });
      await c.spoil(run);
      const v = await cli(['validate', run], user.work, { timeoutMs: 30_000 });
      expect(v.code, `${c.name}: ${v.stdout}${v.stderr}`).toBe(1);
      expect(v.stdout + v.stderr, c.name).toMatch(c.says);
      for (const extra of [[], ['--allow-invalid']]) {
        const p = await cli(['publish', run, ...extra], user.work, { timeoutMs: 30_000 });
        expect(p.code, `${c.name}: publish ${extra.join(' ')}: ${p.stdout}${p.stderr}`).toBe(2);
        expect(p.stderr, c.name).toMatch(c.says);
      }
      expect(await tip(user.work, RESULTS_REF), c.name).toBeNull();
      expect(await tip(user.work, ARTIFACTS_REF), c.name).toBeNull();
    }
    // The check refuses only what leaves the run: AgentV's own run passes and publishes.
    expect((await cli(['validate', pristine], user.work)).code).toBe(0);
    const p = await cli(['publish', pristine], user.work, { timeoutMs: 60_000 });
    expect(p.code, p.stderr).toBe(0);
    expect(await tip(user.work, RESULTS_REF)).not.toBeNull();
  });
});
