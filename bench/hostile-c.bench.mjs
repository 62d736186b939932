/**
 * Issue 48's hostile groups (round four), as a repeatable trial:
 *   npm run bench -- hostile-c      (writes its counts into BENCHMARKS.md)
 *   node bench/hostile-c.bench.mjs  (prints them)
 * Each group is a module of its own under bench/hostile-round4/ (one per developer's part, so the
 * groups never collide): it exports `group` (its name) and `run()`, which returns
 * `{ cases: { tried, held }, failures: string[], notes: string[] }`. This file only runs them in
 * name order and writes one table. A case holds when its outcome is the one stated; invariants,
 * not timings. Loopback only, everything in a temp dir.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

/** Opt-in (several groups spawn many processes): runs only when named. */
export const optIn = true;

export async function run() {
  const dir = join(ROOT, 'bench', 'hostile-round4');
  const modules = (await readdir(dir)).filter((f) => f.endsWith('.mjs')).sort();
  const rows = [];
  const failures = [];
  const notes = [];
  for (const m of modules) {
    const mod = await import(join(dir, m));
    const r = await mod.run();
    rows.push({ group: mod.group, ...r.cases });
    failures.push(...r.failures.map((f) => `${mod.group}: ${f}`));
    notes.push(...(r.notes ?? []));
  }
  const total = rows.reduce((a, g) => ({ tried: a.tried + g.tried, held: a.held + g.held }), { tried: 0, held: 0 });
  const markdown = [
    '## Hostile inputs, round four (bench/hostile-c.bench.mjs, issue 48)',
    '',
    'One group per module of bench/hostile-round4/. Held: the outcome each group states. Invariants, not timings.',
    '',
    '| group | tried | held |',
    '| --- | ---: | ---: |',
    ...rows.map((g) => `| ${g.group} | ${g.tried} | ${g.held} |`),
    `| **all** | **${total.tried}** | **${total.held}** |`,
    '',
    ...notes,
    ...(notes.length ? [''] : []),
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
  ].join('\n');
  return { markdown, rows, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown } = await run();
  process.stdout.write(markdown + '\n');
}
