/**
 * AgentV is the judge of `storage_mode: hybrid`'s pointer shape: the same run published twice, once
 * in git-native mode and once in hybrid mode (payloads in a bucket on 127.0.0.1), onto two bare
 * remotes, must be listed and detailed alike by AgentV's Dashboard (`agentv serve`): hybrid changes
 * only where payload bytes live, never what the control plane says about a run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { configureResults, describeWithAgentV, makeSampleProject, startAgentVServe, type AgentVServer } from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { objectStoreYaml, startS3, type S3Server } from '../helpers/s3.js';
import { cli, makeRunWorkspace, makeUserRepo } from '../publish-helpers.js';

isolateGitForSuite();

describeWithAgentV('hybrid runs in AgentV’s Dashboard', () => {
  let s3: S3Server;
  const servers: AgentVServer[] = [];

  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await s3?.close();
  });

  async function viewer(remote: string): Promise<AgentVServer> {
    const project = await makeSampleProject();
    await configureResults(project, false);
    await git(project, ['remote', 'add', 'origin', remote]);
    await git(project, ['fetch', '-q', 'origin']);
    const server = await startAgentVServe(project, [], { home: await makeTempDir('agentv-viewer-home') });
    servers.push(server);
    return server;
  }

  const get = async (s: AgentVServer, path: string): Promise<unknown> => (await fetch(`${s.url}${path}`)).json();

  it('lists and details a hybrid run exactly as the same run published git-native', async () => {
    const run = await makeRunWorkspace({ rows: 4, experiment: 'hybrid-judge' });
    const native = await makeUserRepo();
    const hybrid = await makeUserRepo();
    mkdirSync(join(hybrid.work, '.agentv'), { recursive: true });
    writeFileSync(join(hybrid.work, '.agentv', 'config.yaml'), `results:\n${objectStoreYaml(s3)}\n`);
    expect((await cli(['publish', run.dir, '--push'], native.work)).code).toBe(0);
    const h = await cli(['publish', run.dir, '--push', '--json'], hybrid.work, { env: s3.env });
    expect(h.code, h.stderr).toBe(0);
    expect((JSON.parse(h.stdout) as { stored: { objects: number } }).stored.objects).toBeGreaterThan(0);

    const [a, b] = [await viewer(native.remote), await viewer(hybrid.remote)];
    const runsA = (await get(a, '/api/runs')) as { runs: { filename: string }[] };
    const runsB = (await get(b, '/api/runs')) as { runs: { filename: string }[] };
    expect(runsB.runs.map((r) => r.filename)).toEqual(runsA.runs.map((r) => r.filename));
    expect(runsB.runs.length).toBe(1);
    const r = encodeURIComponent(runsA.runs[0]!.filename);
    const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x) => (k === 'last_synced_at' || k === 'generated_at' ? undefined : x)));
    const detailA = (await get(a, `/api/runs/${r}`)) as { results?: unknown[] };
    expect(detailA.results?.length).toBe(4);
    expect(strip(await get(b, `/api/runs/${r}`))).toEqual(strip(detailA));
    expect(strip(await get(b, `/api/runs/${r}/suites`))).toEqual(strip(await get(a, `/api/runs/${r}/suites`)));
  }, 240_000);
});
