/**
 * Configuration: the `results` block, `projects[].results` blocks, environment and flags, in that
 * order of precedence, and errors that name the offending key. Then one real publish per project
 * of a two-project repository, each landing on its own branches.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadResultsConfig } from '../src/repo/config.js';
import { ConfigError } from '../src/errors/publish-errors.js';
import { git, makeTempDir, isolateGitForSuite } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

async function withConfig(yaml: string): Promise<string> {
  const root = await makeTempDir('agentv-config');
  await mkdir(join(root, '.agentv'));
  await mkdir(join(root, 'apps/web/src'), { recursive: true });
  await mkdir(join(root, 'apps/api'), { recursive: true });
  await writeFile(join(root, '.agentv/config.yaml'), yaml);
  return root;
}

const TWO_PROJECTS = `results:
  branch: agentv/results/shared
  auto_push: true
projects:
  - id: web
    name: The web app
    path: apps/web
    results:
      branch: agentv/results/web
      artifacts_branch: agentv/artifacts/web
  - id: api
    path: apps/api
  - id: apps
    path: apps
    results:
      heavy_threshold_bytes: 1000
`;

describe('loadResultsConfig', () => {
  it('reads the top-level results block, found upward from a subdirectory', async () => {
    const root = await withConfig('results:\n  branch: agentv/results/team\n  heavy_threshold_bytes: 4096\n');
    const loaded = await loadResultsConfig({ cwd: join(root, 'apps/api'), env: {} });
    expect(loaded.file).toBe(join(root, '.agentv/config.yaml'));
    expect(loaded.baseDir).toBe(root);
    expect(loaded.project).toBeNull();
    expect(loaded.config).toMatchObject({
      branch: 'agentv/results/team',
      artifacts_branch: 'agentv/artifacts/v1',
      heavy_threshold_bytes: 4096,
      auto_push: false,
    });
  });

  it('lets the environment override the file, and flags override both', async () => {
    const root = await withConfig('results:\n  branch: agentv/results/file\n  auto_push: false\n');
    const env = { AGENTV_RESULTS_BRANCH: 'agentv/results/env', AGENTV_RESULTS_AUTO_PUSH: 'yes' };
    expect((await loadResultsConfig({ cwd: root, env })).config).toMatchObject({ branch: 'agentv/results/env', auto_push: true });
    expect((await loadResultsConfig({ cwd: root, env, overrides: { branch: 'agentv/results/flag' } })).config.branch).toBe('agentv/results/flag');
  });

  it('picks the project whose path holds the working directory, the deepest one winning', async () => {
    const root = await withConfig(TWO_PROJECTS);
    const web = await loadResultsConfig({ cwd: join(root, 'apps/web/src'), env: {} });
    expect(web.project).toBe('web');
    // The project's keys override; the others are inherited from the top-level block.
    expect(web.config).toMatchObject({ branch: 'agentv/results/web', artifacts_branch: 'agentv/artifacts/web', auto_push: true });
    const api = await loadResultsConfig({ cwd: join(root, 'apps/api'), env: {} });
    expect(api.project).toBe('api');
    expect(api.config.branch).toBe('agentv/results/shared');
    const apps = await loadResultsConfig({ cwd: join(root, 'apps'), env: {} });
    expect(apps.project).toBe('apps');
    expect(apps.config.heavy_threshold_bytes).toBe(1000);
    const top = await loadResultsConfig({ cwd: root, env: {} });
    expect(top.project).toBeNull();
    expect(top.config.branch).toBe('agentv/results/shared');
  });

  it('takes the project named by the option, else by AGENTV_PROJECT, wherever it runs', async () => {
    const root = await withConfig(TWO_PROJECTS);
    expect((await loadResultsConfig({ cwd: join(root, 'apps/api'), env: { AGENTV_PROJECT: 'web' } })).project).toBe('web');
    expect((await loadResultsConfig({ cwd: root, env: { AGENTV_PROJECT: 'web' }, project: 'api' })).project).toBe('api');
  });

  it('refuses an unknown project, listing the known ones', async () => {
    const root = await withConfig(TWO_PROJECTS);
    await expect(loadResultsConfig({ cwd: root, env: {}, project: 'mobile' })).rejects.toThrow(/no project "mobile" \(known: web, api, apps\)/);
    const bare = await withConfig('results:\n  auto_push: true\n');
    await expect(loadResultsConfig({ cwd: bare, env: { AGENTV_PROJECT: 'web' } })).rejects.toThrow(ConfigError);
  });

  it('names the offending key, in the project block when that is where it came from', async () => {
    const badProject = await withConfig('projects:\n  - id: web\n    path: apps/web\n    results:\n      branch: "no spaces allowed"\n');
    await expect(loadResultsConfig({ cwd: join(badProject, 'apps/web'), env: {} })).rejects.toThrow(/projects\[id=web\]\.results\.branch: /);
    const unknownKey = await withConfig('projects:\n  - id: web\n    results:\n      brnach: x\n');
    await expect(loadResultsConfig({ cwd: unknownKey, env: {}, project: 'web' })).rejects.toThrow(/unknown key\(s\) projects\[id=web\]\.results\.brnach/);
    const topLevel = await withConfig('results:\n  heavy_threshold_bytes: -1\n');
    await expect(loadResultsConfig({ cwd: topLevel, env: {} })).rejects.toThrow(/results\.heavy_threshold_bytes: /);
    const noId = await withConfig('projects:\n  - path: apps/web\n');
    await expect(loadResultsConfig({ cwd: noId, env: {} })).rejects.toThrow(/projects\[0\]\.id: /);
    const twice = await withConfig('projects:\n  - id: web\n  - id: web\n');
    await expect(loadResultsConfig({ cwd: twice, env: {} })).rejects.toThrow(/projects\[1\]\.id: "web" appears twice/);
    const notList = await withConfig('projects:\n  web: {}\n');
    await expect(loadResultsConfig({ cwd: notList, env: {} })).rejects.toThrow(/projects: expected a list/);
  });
});

describe('projects through the CLI', () => {
  it('publishes each project to its own branches, chosen by directory or by --project; status names the project', async () => {
    const user = await makeUserRepo();
    await mkdir(join(user.work, '.agentv'), { recursive: true });
    await mkdir(join(user.work, 'apps/web'), { recursive: true });
    await writeFile(
      join(user.work, '.agentv/config.yaml'),
      'projects:\n  - id: web\n    path: apps/web\n    results:\n      branch: agentv/results/web\n      artifacts_branch: agentv/artifacts/web\n',
    );
    const [a, b] = await Promise.all([makeRunWorkspace({ rows: 2, minute: 1 }), makeRunWorkspace({ rows: 2, minute: 2, seed: 3 })]);

    const fromWeb = await cli(['publish', a.dir, '--json'], join(user.work, 'apps/web'));
    expect(fromWeb.code, fromWeb.stderr).toBe(0);
    expect(await tip(user.work, 'refs/heads/agentv/results/web')).not.toBeNull();
    expect(await tip(user.work, 'refs/heads/agentv/artifacts/web')).not.toBeNull();
    expect(await tip(user.work, 'refs/heads/agentv/results/v1')).toBeNull();

    const fromRoot = await cli(['publish', b.dir, '--json'], user.work);
    expect(fromRoot.code, fromRoot.stderr).toBe(0);
    expect(await tip(user.work, 'refs/heads/agentv/results/v1')).not.toBeNull();
    expect(await git(user.work, ['ls-tree', '-r', '--name-only', 'agentv/results/web'])).not.toContain(b.runId);

    const listed = JSON.parse((await cli(['list', '--json', '--project', 'web'], user.work)).stdout) as { runs: { run_id: string }[] };
    expect(listed.runs.map((r) => r.run_id)).toEqual([a.runId]);
    const status = await cli(['status', '--json', '--project', 'web'], user.work);
    expect(JSON.parse(status.stdout)).toMatchObject({ project: 'web' });
    const human = await cli(['status'], join(user.work, 'apps/web'));
    expect(human.stdout).toMatch(/project\s+web/);

    const unknown = await cli(['list', '--project', 'mobile'], user.work);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no project "mobile" \(known: web\)/);
  });

  it('takes a relative results.repo path as relative to the folder holding .agentv/, from any subdirectory', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    expect((await cli(['publish', run.dir, '--push'], user.work)).code).toBe(0);
    const elsewhere = await makeTempDir('agentv-rel');
    await mkdir(join(elsewhere, '.agentv'));
    await mkdir(join(elsewhere, 'deep/down'), { recursive: true });
    await writeFile(join(elsewhere, '.agentv/config.yaml'), `results:\n  repo: ${relative(elsewhere, user.remote)}\n`);
    const env = { AGENTV_RESULTS_CACHE: join(elsewhere, 'cache') };
    for (const cwd of [join(elsewhere, 'deep/down'), elsewhere]) {
      const listed = await cli(['list', '--json'], cwd, { env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).runs.map((r: { run_id: string }) => r.run_id)).toEqual([run.runId]);
    }
    // One clone for both, and it remembers the remote by its absolute path.
    const clones = readdirSync(join(elsewhere, 'cache/repos'));
    expect(clones).toHaveLength(1);
    expect(await git(join(elsewhere, 'cache/repos', clones[0]!), ['config', 'remote.origin.url'])).toBe(user.remote);
  });
});
