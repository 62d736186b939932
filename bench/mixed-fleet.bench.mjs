/**
 * The mixed fleet at the size, once (opt-in: `npm run bench -- mixed-fleet`): two machines
 * each of AgentV 5.x `auto_push`, AgentV 4.42.4 `auto_push` and ours, five rounds, over `git
 * daemon` on 127.0.0.1 with this machine's git. It runs test/conformance/mixed-fleet.test.ts
 * itself (the same helpers, the same assertions) with AGENTV_MIXED_FLEET=full, and reports what
 * that run counted: AgentV pushes that failed per round, runs our sync rescued, sync branches left,
 * fsck, and the runs each AgentV Dashboard lists. Beside them, AgentV 4.42.4 machines with
 * auto_push off whose runs ours publish (issue 50: each run must land exactly once). npm test runs
 * the same file at 1+1+1+1 x 2 rounds.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

export const optIn = true;

/** Runs the suite at full size; resolves with its report (rejects when a test failed). */
export async function measure() {
  const report = join(await mkdtemp(join(tmpdir(), 'mixed-fleet-bench-')), 'report.json');
  const code = await new Promise((resolve, reject) => {
    const child = spawn('npx', ['vitest', 'run', 'test/conformance/mixed-fleet.test.ts'], {
      cwd: ROOT,
      env: { ...process.env, AGENTV_MIXED_FLEET: 'full', AGENTV_MIXED_FLEET_REPORT: report },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error(`the full mixed fleet failed (vitest exit ${code}): see its output above`);
  return JSON.parse(await readFile(report, 'utf8'));
}

export async function run() {
  const r = await measure();
  const rows = r.failed_auto_push.map((f) => `| ${f.round} | ${f.v5} of ${r.per_kind} | ${f.v4} of ${r.per_kind} | ${f.parked} |`).join('\n');
  const markdown = `## Mixed fleet: AgentV 5.x and 4.42.4 auto_push beside ours, ${r.per_kind} machines each x ${r.rounds} rounds

\`bench/mixed-fleet.bench.mjs\` runs test/conformance/mixed-fleet.test.ts at full size over \`git daemon\` on 127.0.0.1 (round 1 with the remote down; in later rounds ours publish first, then every AgentV machine at once), then \`agentv-results sync\` on every machine (ours first). One run, ${r.wall_s} s wall.

| round | AgentV 5.x pushes that did not land | AgentV 4.42.4 pushes that did not land | sync branches 5.x parked |
| --- | --- | --- | --- |
${rows}

Runs: ${r.runs.agentv_5x} by AgentV 5.x, ${r.runs.agentv_4_42} by 4.42.4, ${r.runs.agentv_4_42_auto_push_off} by 4.42.4 with auto_push off (published by ours, each exactly once), ${r.runs.ours} by ours; our \`list\` counts ${r.listed_by_our_list} (each run once). Stranded before our sync: ${r.stranded_before_sync}; on the results branch after it: ${r.rescued} of those (every run of every machine). AgentV sync branches parked on the remote: ${r.sync_branches_parked}; adopted by our sync: ${r.adopted_by_our_sync}; left: ${r.sync_branches_left}. \`git fsck --full\` of the remote: ${r.fsck}. AgentV 5.x's Dashboard lists ${r.dashboard_5x_lists} runs (its own and ours at the root), 4.42.4's lists ${r.dashboard_4_42_lists} (under \`runs/\`).
`;
  return { markdown };
}
