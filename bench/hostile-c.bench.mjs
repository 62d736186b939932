/**
 * Issue 48's hostile groups (round four), as a repeatable trial:
 *   npm run bench -- hostile-c      (writes its counts into BENCHMARKS.md)
 *   node bench/hostile-c.bench.mjs  (prints them)
 * Each group is a module of its own under bench/hostile-round4/ (one per part of the issue, so the
 * groups never collide): it exports `run()`, which returns its failures and either one tally
 * (`group` exported, `cases: { tried, held }`, optional `notes`) or a tally per sub-group
 * (`groups: { name: { tried, held } }`, optional `markdown` of its own). This file runs them in name
 * order and writes one table, then each module's own text. A case holds when its outcome is the one stated; invariants,
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
    const name = mod.group ?? m.replace(/\.mjs$/, '');
    process.stderr.write(`hostile-c: ${name}…\n`);
    const r = await mod.run();
    if (r.cases) rows.push({ group: name, ...r.cases });
    for (const [g, c] of Object.entries(r.groups ?? {})) rows.push({ group: `${name}: ${g}`, ...c });
    failures.push(...r.failures.map((f) => `${name}: ${f}`));
    // A module's own text, without its heading and its own held/not-held line (this file writes one).
    if (r.markdown) notes.push('', r.markdown.replace(/^## .*\n+/, '').replace(/\n+(Every case held\.|Not held:[\s\S]*)$/, ''));
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
