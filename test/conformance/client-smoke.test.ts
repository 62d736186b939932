/**
 * The conformance peer itself works: the real AgentV client makes a run in the offline sample
 * project and serves its Dashboard API on loopback. Every other conformance suite builds on this.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, makeSampleProject, startAgentVServe, type AgentVServer } from '../helpers/agentv-client.js';
import { isolateGitForSuite } from '../helpers/git-fixtures.js';

describeWithAgentV('the real AgentV client as a test peer', () => {
  isolateGitForSuite();
  let server: AgentVServer | null = null;
  afterAll(async () => {
    await server?.stop();
  });

  it('writes a run workspace with agentv eval and serves /api/runs on 127.0.0.1', async () => {
    const project = await makeSampleProject();
    const runDir = await agentvEval(project, { experiment: 'smoke' });
    expect(existsSync(join(runDir, '.internal', 'index.jsonl'))).toBe(true);
    const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8'));
    expect(summary.metadata?.experiment ?? summary.experiment).toBe('smoke');
    server = await startAgentVServe(project);
    const res = await fetch(`${server.url}/api/runs`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(JSON.stringify(body)).toContain(runDir.split('/').pop());
  });
});
