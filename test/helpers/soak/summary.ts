// What the soak prints: a progress line per round (a 20-round soak runs for minutes) and one
// `soak summary:` JSON line at the end, the figures BENCHMARKS.md records ("Soak").
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { CheckReport } from './check.js';
import { CLONES, OPS, ROUNDS, SEED } from './config.js';
import { PROTECTED } from './remote.js';
import type { Soak } from './soak.js';

const totalOps = (soak: Soak) => [...soak.ops.values()].reduce((a, b) => a + b, 0);

export function printRoundProgress(soak: Soak, round: number, started: number): void {
  process.stderr.write(
    `soak round ${round}/${ROUNDS} (seed ${SEED}): ${totalOps(soak)} operations so far, ${soak.settled.length} runs, ${soak.violations.length} violations, ${Math.round((performance.now() - started) / 1000)} s\n`,
  );
}

/** Prints the summary line (and writes it as JSON to AGENTV_SOAK_REPORT when set). */
export async function reportSummary(soak: Soak, reports: CheckReport[], agentv: string, started: number): Promise<void> {
  const last = reports[reports.length - 1]!;
  const summary = {
    seed: SEED,
    rounds: ROUNDS,
    clones: CLONES,
    opsPerClone: OPS,
    ops: Object.fromEntries([...soak.ops].sort()),
    totalOps: totalOps(soak),
    kills: soak.kills,
    runs: last.runs,
    rows: last.rows,
    pointers: last.pointers,
    validations: reports.reduce((a, b) => a + b.validated, 0),
    remoteUpdates: Object.fromEntries(PROTECTED.map((ref) => [ref.split('/').slice(-2).join('/'), soak.state.reflogSeen.get(ref) ?? 0])),
    violations: soak.violations.length,
    agentv,
    wallSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  process.stderr.write(`soak summary: ${JSON.stringify(summary)}\n`);
  if (process.env.AGENTV_SOAK_REPORT) await writeFile(process.env.AGENTV_SOAK_REPORT, `${JSON.stringify(summary, null, 2)}\n`);
}
