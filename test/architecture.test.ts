// The layering of ARCHITECTURE.md, enforced. The table in ARCHITECTURE.md ("Folders and layers") is the
// data: each row names a top-level folder of src/ and its layer. A folder is one layer: every relative
// import from one folder to another must go to a LOWER layer (inside a folder imports are free), and no
// file may reach itself again through a chain of imports (no cycles, inside a folder either). The table
// is read from the document itself, and CONTRIBUTING.md's folder list from its page, so neither page
// and the tree can drift apart silently.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

const twice: string[] = [];

/** folder ('sync/') -> layer, from ARCHITECTURE.md's table. */
function foldersFromDoc(): Map<string, number> {
  const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const folders = new Map<string, number>();
  for (const m of doc.matchAll(/^\| (\d+) \| `([a-z0-9-]+\/)` \|/gm)) {
    if (folders.has(m[2]!)) twice.push(m[2]!);
    folders.set(m[2]!, Number(m[1]));
  }
  return folders;
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
/** The folder a src-relative path belongs to ('' for src/index.ts, the public API). */
const folderOf = (path: string) => (path.includes('/') ? `${path.split('/')[0]}/` : '');

const topFolders = () =>
  readdirSync(SRC)
    .filter((e) => statSync(join(SRC, e)).isDirectory())
    .map((d) => `${d}/`)
    .sort();

/** Every relative import of src/: [from, to], both src-relative .ts paths (imports that leave src/ are not kept). */
function importEdges(files: string[]): [string, string, string][] {
  const edges: [string, string, string][] = [];
  for (const from of files) {
    const text = readFileSync(join(SRC, from), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const target = posix.normalize(posix.join(posix.dirname(from), m[1]!)).replace(/\.js$/, '.ts');
      if (target.startsWith('..')) continue;
      edges.push([from, target, m[1]!]);
    }
  }
  return edges;
}

/** The strongly connected components of more than one file (Tarjan), each a cycle of imports. */
function cycles(files: string[], edges: [string, string, string][]): string[][] {
  const next = new Map<string, string[]>();
  for (const [a, b] of edges) next.set(a, [...(next.get(a) ?? []), b]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || (next.get(v) ?? []).includes(v)) found.push(c.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

describe('ARCHITECTURE.md layering', () => {
  const layers = foldersFromDoc();
  const files = sourceFiles(SRC).map(srcPath);
  const edges = importEdges(files);

  it('names each folder once, and every folder of src/ and no other', () => {
    expect(layers.size).toBeGreaterThan(10);
    expect(twice).toEqual([]);
    expect([...layers.keys()].sort()).toEqual(topFolders());
  });

  it('has no import that goes up or sideways between folders', () => {
    const violations: string[] = [];
    for (const [from, target, spec] of edges) {
      const a = folderOf(from);
      if (a === '') continue; // src/index.ts is the public API and may export any layer
      const b = folderOf(target);
      if (b === a) continue;
      const la = layers.get(a);
      const lb = layers.get(b);
      if (la === undefined || lb === undefined || lb >= la) violations.push(`src/${from} (${a}, layer ${la}) imports ${spec} (${b}, layer ${lb})`);
    }
    expect(violations).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files, edges)).toEqual([]);
  });

  it('finds a cycle and an upward import when there is one (the checks can fail)', () => {
    const fake: [string, string, string][] = [
      ['a/x.ts', 'a/y.ts', './y.js'],
      ['a/y.ts', 'a/x.ts', './x.js'],
    ];
    expect(cycles(['a/x.ts', 'a/y.ts'], fake)).toEqual([['a/x.ts', 'a/y.ts']]);
    expect(folderOf('gate/gate.ts')).toBe('gate/');
    expect(layers.get('cli/')! > layers.get('git/')!).toBe(true);
  });

  it("CONTRIBUTING.md's folder list names every folder of src/ and no other", () => {
    const page = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    const list = /<!-- folders -->([\s\S]*?)<!-- \/folders -->/.exec(page);
    expect(list, 'CONTRIBUTING.md marks its folder list with <!-- folders --> … <!-- /folders -->').not.toBeNull();
    const named = [...list![1]!.matchAll(/`([a-z0-9-]+\/)`/g)].map((m) => m[1]!);
    expect([...new Set(named)].sort()).toEqual(topFolders());
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
