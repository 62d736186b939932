/**
 * The live verbs' doors let through what a caller rightly passes (test/verb-doors.test.ts knocks
 * with what they refuse): the process's own environment object, the defaults the schemas hold,
 * and the commands' flags made from the same schemas.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';
import { commitFiles, initRepo, isolateGitForSuite } from './helpers/git-fixtures.js';
import { runCli } from './helpers/cli.js';

isolateGitForSuite();

let repo = '';
beforeAll(async () => {
  repo = await initRepo();
  await commitFiles(repo, { 'README.md': 'live doors\n' });
});

describe('the live verbs take what a caller rightly passes', () => {
  it('process.env itself as the environment (zod does not take it for a record)', async () => {
    const listing = await lib.listWipBranches({ cwd: repo, env: process.env, fetch: false });
    expect(listing.entries).toEqual([]);
    expect(() => lib.webhookFrom(undefined, process.env)).not.toThrow();
    const hook = lib.webhookFrom(undefined, { ...process.env, AGENTV_RESULTS_WEBHOOK_URL: 'https://hooks.example.invalid/T0/B0' });
    expect(hook?.url.host).toBe('hooks.example.invalid');
    // null: notices go nowhere; a function: they go there. Both are right.
    expect(() => lib.setNoticeSink(null)).not.toThrow();
  });

  it("createLogger's defaults (text, from info up) come from its schema", () => {
    const lines: string[] = [];
    const log = lib.createLogger({ write: (l) => lines.push(l), now: () => new Date(0) });
    log.debug('hidden');
    log.info('shown', { run: 'a b' });
    expect(lines).toEqual(['1970-01-01T00:00:00.000Z info  shown run="a b"\n']);
  });

  it("startServer's defaults: loopback, any free port", async () => {
    const server = await lib.startServer({ cwd: repo, readOnly: true });
    try {
      expect(server.host).toBe('127.0.0.1');
      expect(server.port).toBeGreaterThan(0);
      expect(server.exposed).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('wip clean takes --older-than as a duration and --dry-run from the schema flags', async () => {
    const r = await runCli(['wip', 'clean', '--older-than', '2w', '--dry-run', '--json', '--dir', repo]);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { decisions: unknown[] }).decisions).toEqual([]);
    const list = await runCli(['wip', 'list', '--no-fetch', '--json', '--dir', repo]);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { branches: unknown[] }).branches).toEqual([]);
  });
});
