// Checks made once, after the last round: they are too slow (AgentV's validator) or too local
// (each clone's own repository) to run after every round.
import { join } from 'node:path';
import { expect } from 'vitest';
import { runGit } from '../../../src/git/index.js';
import { cli } from '../../publish-helpers.js';
import { HAS_AGENTV, runAgentV } from '../agentv-client.js';
import { makeTempDir } from '../git-fixtures.js';
import type { Soak } from './soak.js';

/** AgentV's own validator on a run or two, pulled with their payloads; returns what it found, for the summary. */
export async function validateWithAgentV(soak: Soak, reader: string): Promise<string> {
  if (!HAS_AGENTV || soak.violations.length > 0) return 'skipped: the AgentV client is not in ../shared';
  // The runs most clones published rows of (merged shards), the largest first.
  const runs = soak.settled
    .map((s) => s.run)
    .sort((a, b) => b.publishers.size - a.publishers.size || b.expected.size - a.expected.size)
    .slice(0, 2);
  const out = await makeTempDir('soak-agentv');
  const results: string[] = [];
  for (const run of runs) {
    const dir = join(out, run.id);
    const p = await cli(['pull', run.id, '--fetch', '--with-artifacts', '--out', dir], reader);
    expect(p.code, p.stderr).toBe(0);
    const res = await runAgentV(['results', 'validate', dir], { cwd: out });
    const errors = Number(/(\d+) error\(s\)/.exec(res.stdout)?.[1] ?? 0);
    if (res.code !== 0 || errors !== 0)
      soak.violate(`agentv results validate ${run.id}: exit ${res.code}, ${errors} errors: ${(res.stdout + res.stderr).slice(0, 400)}`);
    results.push(`${run.id} (${run.expected.size} rows, ${run.publishers.size} clones): ${errors} errors`);
  }
  return results.join('; ');
}

/** Every clone's repository is intact too (publishes were killed in some of them). */
export async function fsckClones(soak: Soak): Promise<void> {
  for (const c of soak.clones) {
    const f = await runGit(['fsck', '--no-dangling', '--no-progress'], { cwd: c.dir, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8] });
    const out = `${f.stdout.toString()}${f.stderr}`.trim();
    if (f.code !== 0 || out !== '') soak.violate(`git fsck of clone ${c.index}: exit ${f.code}: ${out.slice(0, 300)}`);
  }
}
