/**
 * `npm run bench`: runs every bench/*.bench.mjs (or those named on the command line), each of
 * which returns a markdown section, and writes them all to BENCHMARKS.md.
 *   npm run bench                 # everything
 *   npm run bench -- export       # only bench/export.bench.mjs
 *   npm run bench -- tiers        # opt-in benchmarks (export const optIn) run only when named
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import os from 'node:os';
import { ROOT } from './lib.mjs';

const only = process.argv.slice(2);
const files = (await readdir(join(ROOT, 'bench'))).filter((f) => f.endsWith('.bench.mjs')).sort();
const named = (f) => only.some((o) => f.startsWith(o));
// A benchmark that exports `optIn` (it takes many minutes) runs only when named.
const selected = [];
for (const f of files) {
  if (named(f)) selected.push(f);
  else if (only.length === 0 && !(await import(join(ROOT, 'bench', f))).optIn) selected.push(f);
}
const outPath = join(ROOT, 'BENCHMARKS.md');

// Sections are kept per benchmark so that running one benchmark does not erase the others. The
// file is read again right before writing (benchmarks take minutes, and two runs at once used to
// drop each other's sections) and only this run's sections are replaced.
async function readSections() {
  const sections = {};
  try {
    const text = await readFile(outPath, 'utf8');
    for (const part of text.split(/^<!-- bench:/m).slice(1)) {
      const name = part.slice(0, part.indexOf(' -->'));
      sections[name] = '<!-- bench:' + part.trimEnd() + '\n';
    }
  } catch {}
  return sections;
}

const mine = {};
for (const file of selected) {
  const name = file.replace('.bench.mjs', '');
  process.stderr.write(`bench: ${name}…\n`);
  const mod = await import(join(ROOT, 'bench', file));
  const { markdown } = await mod.run();
  mine[name] = `<!-- bench:${name} -->\n${markdown.trimEnd()}\n`;
  process.stderr.write(markdown + '\n');
}
const previous = { ...(await readSections()), ...mine };

const header = `# Benchmarks

Figures from \`npm run bench\` on this project's machine kind (${os.cpus().length} cores, Node ${process.version}).
The machine is shared and noisy: a bench's figure is a median of several runs, reported as a ratio
against a baseline measured in the same run; absolute times are shown for orientation only. Each
section starts with the bench that wrote it (\`<!-- bench:NAME -->\`: \`npm run bench -- NAME\`); a
section recorded by hand has a marker of its own and names the test or command that measured it.

`;
await writeFile(
  outPath,
  header +
    Object.keys(previous)
      .sort()
      .map((k) => previous[k])
      .join('\n'),
);
process.stderr.write(`wrote ${outPath}\n`);
