/**
 * The `results` blocks docs/configuration.md tells each team to write ("Which spelling your AgentV
 * reads"), run through the AgentV client they are for: it starts without warning about them, and
 * we read the same checkout from them. The spellings a client does warn about are checked too, so
 * the table beside the blocks stays what was measured.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { describeWithAgentV, describeWithAgentVStable, HAS_AGENTV_STABLE, runAgentV, runAgentVStable } from '../helpers/agentv-client.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { git, makeTempDir } from '../helpers/git-fixtures.js';
import { loadResultsConfig } from '../../src/repo/config.js';

type Line = '5.x' | '4.42';

/** What AgentV prints at start-up about the `results` block (any command loads the config first). */
async function warnings(line: Line, project: string): Promise<string[]> {
  const run = line === '5.x' ? runAgentV : runAgentVStable;
  // An unknown subcommand: the client loads the config, warns, then stops without doing anything.
  const r = await run(['results', 'no-such-subcommand'], { cwd: project, timeoutMs: 90_000 });
  return `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => /Invalid results/.test(l));
}

async function projectWith(block: string): Promise<string> {
  const project = await makeTempDir('config-spelling');
  await git(project, ['init', '-q']);
  await mkdir(join(project, '.agentv'), { recursive: true });
  await writeFile(join(project, '.agentv', 'config.yaml'), block.replaceAll('/home/me/work/evals', project));
  return project;
}

async function documentedBlocks(): Promise<{ lines: Line[]; yaml: string }[]> {
  const doc = await readFile(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
  const out: { lines: Line[]; yaml: string }[] = [];
  for (const m of doc.matchAll(/```yaml\n# agentv: (5\.x|4\.42|both)\n([\s\S]*?)```/g)) {
    out.push({ lines: m[1] === 'both' ? ['5.x', '4.42'] : [m[1] as Line], yaml: m[2]! });
  }
  return out;
}

(HAS_AGENTV_STABLE ? describeWithAgentV : describeWithAgentVStable)('the config spellings we document are the ones each AgentV reads', () => {
  it('each documented block: its AgentV starts without a warning, and we read this checkout from it', async () => {
    const blocks = await documentedBlocks();
    expect(blocks.map((b) => b.lines.join('+'))).toEqual(['5.x', '4.42', '5.x+4.42']);
    for (const b of blocks) {
      const project = await projectWith(b.yaml);
      for (const line of b.lines) expect(await warnings(line, project), `${line}:\n${b.yaml}`).toEqual([]);
      const loaded = await loadResultsConfig({ cwd: project, env: {} });
      expect(resolve(project, loaded.config.path!), b.yaml).toBe(project);
    }
  }, 300_000);

  it("the other line's spelling alone is what that AgentV warns about (the table, measured)", async () => {
    const only = async (key: string, line: Line) => warnings(line, await projectWith(`results:\n  ${key}\n  branch: agentv/results/v1\n`));
    expect((await only('path: .', '4.42')).join('\n')).toMatch(/expected repo_url\/repo or repo_path/);
    expect((await only('repo_path: .', '5.x')).join('\n')).toMatch(/expected repo or path/);
    expect(await only('repo: https://example.invalid/results.git', '5.x')).toEqual([]);
    expect(await only('repo: https://example.invalid/results.git', '4.42')).toEqual([]);
    // The two spellings of one checkout are one setting for us; two different checkouts are refused.
    const dir = await projectWith('results:\n  repo_path: .\n  path: ../elsewhere\n');
    await expect(loadResultsConfig({ cwd: dir, env: {} })).rejects.toThrow(/repo_path and results.path/);
  }, 300_000);
});
