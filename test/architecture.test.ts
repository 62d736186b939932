// The layering of ARCHITECTURE.md, enforced. The table in ARCHITECTURE.md is the data: each row names
// a unit of src/ (a folder such as `sync/`, a folder inside a concept such as `results-branch/read/`,
// or one file such as `overlays/document.ts`) and its layer. A file belongs to the longest unit that
// contains it. Every relative import from one unit to another must go to a LOWER layer; inside a unit
// imports are free. The table is read from the document itself, so the page and the code cannot
// drift apart silently.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

const twice: string[] = [];

/** unit ('sync/', 'results-branch/read/', 'overlays/document.ts') -> layer */
function unitsFromDoc(): Map<string, number> {
  const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const units = new Map<string, number>();
  for (const m of doc.matchAll(/^\| (\d+) \| `([a-z0-9-]+(?:\/[a-z0-9-]+)*(?:\/|\.ts))` \|/gm)) {
    if (units.has(m[2]!)) twice.push(m[2]!);
    units.set(m[2]!, Number(m[1]));
  }
  return units;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (e.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** src-relative, forward slashes */
const srcPath = (file: string) => relative(SRC, file).split('\\').join('/');

/** The unit a src-relative path belongs to: the longest one that contains it ('' for src/index.ts). */
function unitOf(path: string, units: Map<string, number>): string | undefined {
  if (path === 'index.ts') return '';
  let best: string | undefined;
  for (const u of units.keys()) {
    const hit = u.endsWith('/') ? path.startsWith(u) : path === u;
    if (hit && (best === undefined || u.length > best.length)) best = u;
  }
  return best;
}

describe('ARCHITECTURE.md layering', () => {
  const units = unitsFromDoc();
  const files = sourceFiles(SRC).map(srcPath);

  it('names each unit once', () => {
    expect(units.size).toBeGreaterThan(10);
    expect(twice).toEqual([]);
  });

  it('puts every file of src/ in a unit of the table, and names no unit that is not there', () => {
    expect(files.filter((f) => unitOf(f, units) === undefined)).toEqual([]);
    const used = new Set(files.map((f) => unitOf(f, units)));
    expect([...units.keys()].filter((u) => !used.has(u))).toEqual([]);
  });

  it('gives every top-level folder of src/ a row of its own or rows for all of its files', () => {
    const folders = readdirSync(SRC).filter((e) => statSync(join(SRC, e)).isDirectory());
    for (const d of folders)
      expect(
        [...units.keys()].some((u) => u === `${d}/` || u.startsWith(`${d}/`)),
        d,
      ).toBe(true);
  });

  it('has no import that goes up or sideways between units', () => {
    const violations: string[] = [];
    for (const from of files) {
      const a = unitOf(from, units);
      if (a === '' || a === undefined) continue; // src/index.ts is the public API and may export any layer
      const text = readFileSync(join(SRC, from), 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = posix.normalize(posix.join(posix.dirname(from), m[1]!)).replace(/\.js$/, '.ts');
        if (target.startsWith('..')) continue;
        const b = unitOf(target, units);
        if (b === a) continue;
        const la = units.get(a);
        const lb = b === undefined ? undefined : units.get(b);
        if (la === undefined || lb === undefined || lb >= la) violations.push(`src/${from} (${a}, layer ${la}) imports ${m[1]} (${b}, layer ${lb})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('runs git only from src/git', () => {
    const offenders = files
      .filter((f) => !f.startsWith('git/'))
      .filter((f) => /from 'node:child_process'|require\('child_process'\)|from 'child_process'/.test(readFileSync(join(SRC, f), 'utf8')))
      .filter((f) => /['"`]git['"`]/.test(readFileSync(join(SRC, f), 'utf8')))
      .map((f) => `src/${f}`);
    expect(offenders).toEqual([]);
  });
});
