// The layering of ARCHITECTURE.md, enforced: every relative import between folders of src/ must go
// to a folder on a LOWER layer of the table in ARCHITECTURE.md. The table is read from the document
// itself, so the page and the code cannot drift apart silently.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function layersFromDoc(): Map<string, number> {
  const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const layers = new Map<string, number>();
  for (const m of doc.matchAll(/^\| (\d+) \| `([a-z-]+)\/` \|/gm)) layers.set(m[2]!, Number(m[1]));
  return layers;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (e.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Folder of src/ a file belongs to ('' for src/index.ts). */
function folderOf(file: string): string {
  const rel = relative(SRC, file).split(/[\\/]/);
  return rel.length > 1 ? rel[0]! : '';
}

describe('ARCHITECTURE.md layering', () => {
  const layers = layersFromDoc();

  it('names every folder of src/ exactly once', () => {
    const folders = readdirSync(SRC)
      .filter((e) => statSync(join(SRC, e)).isDirectory())
      .sort();
    expect([...layers.keys()].sort()).toEqual(folders);
  });

  it('has no import that goes up or sideways between folders', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = folderOf(file);
      if (from === '') continue; // src/index.ts is the public API and may export any layer
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = posix.normalize(posix.join(posix.dirname(relative(SRC, file).split('\\').join('/')), m[1]!));
        const to = target.split('/')[0]!;
        if (to === from || target.startsWith('..')) continue;
        const a = layers.get(from);
        const b = layers.get(to);
        if (a === undefined || b === undefined || b >= a) violations.push(`${relative(ROOT, file)} (${from}, layer ${a}) imports ${m[1]} (${to}, layer ${b})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('runs git only from src/git', () => {
    const offenders = sourceFiles(SRC)
      .filter((f) => folderOf(f) !== 'git')
      .filter((f) => /from 'node:child_process'|require\('child_process'\)|from 'child_process'/.test(readFileSync(f, 'utf8')))
      .filter((f) => /['"`]git['"`]/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
