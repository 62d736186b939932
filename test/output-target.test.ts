/**
 * The output-target rule (issue 32, util/output-target.ts, README "Where output goes"): no command
 * renames over, or deletes, what it was not asked to create. Every command that writes a file or a
 * run directory is pointed at each kind of target — a character device, a FIFO, a socket, a user's
 * regular file, a user's directory, symbolic links to each — and must either write through (a
 * device or FIFO a file output names), replace (a regular file a file output names, a run
 * workspace), or refuse with exit 2 leaving the target exactly as it was.
 *
 * Devices are made with mknod in the test's own temporary directory (a clone of /dev/null's
 * major/minor, 1:3) — the machine's /dev/null is never named. mknod needs root: CI runs as root;
 * elsewhere the device cases skip, and their names say so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

const IS_ROOT = process.getuid?.() === 0;
const NEEDS_ROOT = IS_ROOT ? '' : ' [skipped: mknod needs root, and this suite is not running as root]';

let restore: () => void;
let tmp: string;
let run: RunWorkspace;
let results: string;
const servers: Server[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  tmp = await makeTempDir('agentv-out-target');
  run = await makeRunWorkspace({ rows: 3, experiment: 'nightly' });
  results = join(tmp, 'results.jsonl');
  const row = (test_id: string, score: number, second: number) => ({
    test_id,
    target: 'm',
    score,
    timestamp: `2026-03-01T10:00:0${second}Z`,
    assertions: [{ text: `${test_id} works`, passed: score >= 0.8 }],
  });
  await writeFile(results, [row('a', 1, 1), row('b', 0.5, 2)].map((r) => JSON.stringify(r)).join('\n') + '\n');
});

afterAll(async () => {
  for (const s of servers) s.close();
  restore();
  await cleanupTempDirs();
});

let n = 0;
const fresh = async () => {
  const d = join(tmp, `case-${n++}`);
  await mkdir(d);
  return d;
};

/** What is at `path`, to compare before and after: kind, device numbers, inode, bytes or entries, link text. */
function fingerprint(path: string): string {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return `link ${st.ino} -> ${readlinkSync(path)}`;
  if (st.isCharacterDevice()) return `char ${st.rdev} ${st.ino}`;
  if (st.isBlockDevice()) return `block ${st.rdev} ${st.ino}`;
  if (st.isFIFO()) return `fifo ${st.ino}`;
  if (st.isSocket()) return `socket ${st.ino}`;
  if (st.isDirectory()) return `dir ${st.ino} [${readdirSync(path).sort().join(',')}]`;
  return `file ${st.ino} ${readFileSync(path, 'utf8')}`;
}
const readlinkSync = (p: string) => execFileSync('readlink', [p]).toString().trim();

/** Target makers: each returns the path of a fresh target of its kind in `dir`. */
const KINDS = {
  'character device': async (dir: string) => {
    const p = join(dir, 'null-clone');
    execFileSync('mknod', [p, 'c', '1', '3']);
    return p;
  },
  // A loop-device node (7:0) of our own: refused everywhere, so never opened.
  'block device': async (dir: string) => {
    const p = join(dir, 'loop-clone');
    execFileSync('mknod', [p, 'b', '7', '0']);
    return p;
  },
  FIFO: async (dir: string) => {
    const p = join(dir, 'pipe');
    execFileSync('mkfifo', [p]);
    return p;
  },
  socket: async (dir: string) => {
    const p = join(dir, 'sock');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((ok) => server.listen(p, ok));
    return p;
  },
  "user's regular file": async (dir: string) => {
    const p = join(dir, 'notes.txt');
    await writeFile(p, 'my notes, not a run\n');
    return p;
  },
  "user's directory": async (dir: string) => {
    const p = join(dir, 'project');
    await mkdir(p);
    await writeFile(join(p, 'keep.md'), 'mine\n');
    return p;
  },
  'symbolic link to a directory': async (dir: string) => {
    const target = join(dir, 'elsewhere');
    await mkdir(target);
    const p = join(dir, 'link');
    await symlink(target, p);
    return p;
  },
  "symbolic link to a user's file": async (dir: string) => {
    const target = join(dir, 'precious.txt');
    await writeFile(target, 'precious\n');
    const p = join(dir, 'link');
    await symlink(target, p);
    return p;
  },
  'dangling symbolic link': async (dir: string) => {
    const p = join(dir, 'link');
    await symlink(join(dir, 'nothing-here'), p);
    return p;
  },
} as const;
type Kind = keyof typeof KINDS;
const ALL_KINDS = Object.keys(KINDS) as Kind[];
const needsRoot = (k: Kind) => k === 'character device' || k === 'block device';
const title = (k: Kind) => (needsRoot(k) ? `${k}${NEEDS_ROOT}` : k);

/** Everything in `dir` except the target, fingerprinted: a refusal must leave the whole case directory as it was. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) out[name] = fingerprint(join(dir, name));
  return out;
}

/** A refusal: exit 2, one line naming the path and what is there, and nothing changed in the case directory. */
async function expectRefused(dir: string, target: string, command: () => Promise<{ code: number; stderr: string; stdout: string }>) {
  const before = tree(dir);
  const r = await command();
  expect(r.code, r.stderr + r.stdout).toBe(2);
  const message = r.stderr.trim();
  expect(message.split('\n')).toHaveLength(1);
  // Named as given or relative to the working directory (tmp): either way, the user sees which path.
  expect(
    [target, relative(tmp, target)].some((p) => message.includes(p)),
    message,
  ).toBe(true);
  expect(tree(dir)).toEqual(before);
}

describe('export --out: a run directory never replaces anything but a run workspace', () => {
  for (const kind of ALL_KINDS) {
    it.skipIf(needsRoot(kind) && !IS_ROOT)(`refuses a ${title(kind)}`, async () => {
      const dir = await fresh();
      const target = await KINDS[kind](dir);
      await expectRefused(dir, target, () => cli(['export', results, '--out', target], tmp));
    });
  }

  it('writes into a new directory, an empty one, and updates its own previous export of the run', async () => {
    const dir = await fresh();
    expect((await cli(['export', results, '--out', join(dir, 'new')], tmp)).code).toBe(0);
    await mkdir(join(dir, 'empty'));
    expect((await cli(['export', results, '--out', join(dir, 'empty')], tmp)).code).toBe(0);
    const again = await cli(['export', results, '--out', join(dir, 'new')], tmp);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(join(dir, 'new', 'index.jsonl'))).toBe(true);
    expect(existsSync(join(dir, 'empty', 'index.jsonl'))).toBe(true);
  });

  it('a file at the default destination (.agentv/results/<run_id>) is refused too', async () => {
    const dir = await fresh();
    const first = await cli(['export', results, '--out', join(dir, 'probe'), '--json'], tmp);
    const runId = JSON.parse(first.stdout).run_id as string;
    await mkdir(join(dir, '.agentv', 'results'), { recursive: true });
    const target = join(dir, '.agentv', 'results', runId);
    await writeFile(target, 'not a run\n');
    await expectRefused(join(dir, '.agentv', 'results'), target, () => cli(['export', results], dir));
  });
});

describe('combine --out', () => {
  for (const kind of ALL_KINDS) {
    it.skipIf(needsRoot(kind) && !IS_ROOT)(`refuses a ${title(kind)}`, async () => {
      const dir = await fresh();
      const target = await KINDS[kind](dir);
      await expectRefused(dir, target, () => cli(['combine', run.dir, '--out', target], tmp));
    });
  }
});

describe('pull --out (with and without --force)', () => {
  let user: UserRepoFixture;
  beforeAll(async () => {
    user = await makeUserRepo();
    const p = await cli(['publish', run.dir], user.work);
    expect(p.code, p.stderr).toBe(0);
  });

  for (const kind of ALL_KINDS) {
    it.skipIf(needsRoot(kind) && !IS_ROOT)(`refuses a ${title(kind)}, even with --force`, async () => {
      const dir = await fresh();
      const target = await KINDS[kind](dir);
      await expectRefused(dir, target, () => cli(['pull', run.runId, '--out', target], user.work));
      await expectRefused(dir, target, () => cli(['pull', run.runId, '--out', target, '--force'], user.work));
    });
  }

  it('replaces its own previous pull only with --force', async () => {
    const dir = await fresh();
    const out = join(dir, 'run');
    expect((await cli(['pull', run.runId, '--out', out], user.work)).code).toBe(0);
    await writeFile(join(out, 'stale.txt'), 'from before\n');
    expect((await cli(['pull', run.runId, '--out', out], user.work)).code).toBe(2);
    expect(existsSync(join(out, 'stale.txt'))).toBe(true);
    const forced = await cli(['pull', run.runId, '--out', out, '--force'], user.work);
    expect(forced.code, forced.stderr).toBe(0);
    expect(existsSync(join(out, 'stale.txt'))).toBe(false);
    expect(existsSync(join(out, 'index.jsonl'))).toBe(true);
  });
});

describe('wip recover --out', () => {
  let user: UserRepoFixture;
  let branch: string;
  beforeAll(async () => {
    user = await makeUserRepo();
    const c = await cli(['wip', 'checkpoint', run.dir, '--no-push'], user.work);
    expect(c.code, c.stderr).toBe(0);
    const list = await cli(['wip', 'list', '--no-fetch', '--json'], user.work);
    branch = JSON.parse(list.stdout).branches[0].branch;
  });

  for (const kind of ALL_KINDS) {
    it.skipIf(needsRoot(kind) && !IS_ROOT)(`refuses a ${title(kind)}`, async () => {
      const dir = await fresh();
      const target = await KINDS[kind](dir);
      await expectRefused(dir, target, () => cli(['wip', 'recover', branch, '--no-fetch', '--out', target], user.work));
    });
  }
});

describe('report --out: a file output', () => {
  /** `cat` reading the FIFO, started before the command so its open for writing can complete. */
  function readFifo(fifo: string): { done: Promise<string>; pid: number } {
    const child = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    const done = new Promise<string>((ok) => child.on('close', () => ok(text)));
    return { done, pid: child.pid! };
  }

  it.skipIf(!IS_ROOT)(`a character device is written through, and stays the same device${NEEDS_ROOT}`, async () => {
    const dir = await fresh();
    const dev = await KINDS['character device'](dir);
    const before = fingerprint(dev);
    const r = await cli(['report', run.dir, '--out', dev], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(fingerprint(dev)).toBe(before);
    expect(readdirSync(dir)).toEqual(['null-clone']);
    // The status line goes to stderr: stdout may be the device itself (--out /dev/stdout).
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Wrote ${dev}`);
  });

  it('a FIFO is written through: the reader gets the whole report and the FIFO stays a FIFO', async () => {
    const dir = await fresh();
    const fifo = await KINDS.FIFO(dir);
    const before = fingerprint(fifo);
    const reader = readFifo(fifo);
    try {
      const r = await cli(['report', run.dir, '--out', fifo], tmp);
      expect(r.code, r.stderr).toBe(0);
      // First: still the FIFO (had it been renamed over, cat would wait forever for a writer).
      expect(fingerprint(fifo)).toBe(before);
      const html = await reader.done;
      expect(html.toLowerCase().startsWith('<!doctype html>')).toBe(true);
      expect(html.trimEnd().endsWith('</html>')).toBe(true);
    } finally {
      try {
        process.kill(reader.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it.skipIf(!IS_ROOT)(`a symbolic link to a character device is followed and written through; the link stays${NEEDS_ROOT}`, async () => {
    const dir = await fresh();
    const dev = await KINDS['character device'](dir);
    const link = join(dir, 'stdout-like');
    await symlink(dev, link);
    const before = tree(dir);
    const r = await cli(['report', run.dir, '--out', link], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(tree(dir)).toEqual(before);
  });

  it('a socket is refused', async () => {
    const dir = await fresh();
    const sock = await KINDS.socket(dir);
    await expectRefused(dir, sock, () => cli(['report', run.dir, '--out', sock], tmp));
  });

  it.skipIf(!IS_ROOT)(`a block device is refused, never opened${NEEDS_ROOT}`, async () => {
    const dir = await fresh();
    const dev = await KINDS['block device'](dir);
    await expectRefused(dir, dev, () => cli(['report', run.dir, '--out', dev], tmp));
  });

  it('a dangling symbolic link is refused', async () => {
    const dir = await fresh();
    const link = await KINDS['dangling symbolic link'](dir);
    await expectRefused(dir, link, () => cli(['report', run.dir, '--out', link], tmp));
  });

  it('a regular file it is named is replaced atomically (a new inode, no temporary left)', async () => {
    const dir = await fresh();
    const file = join(dir, 'index.html');
    await writeFile(file, 'old report\n');
    const ino = statSync(file).ino;
    const r = await cli(['report', run.dir, '--out', file], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(file).ino).not.toBe(ino);
    expect(await readFile(file, 'utf8')).toContain('</html>');
    expect(readdirSync(dir)).toEqual(['index.html']);
  });

  it('a symbolic link to a file is followed: the file is replaced in its own directory, the link kept', async () => {
    const dir = await fresh();
    const link = await KINDS["symbolic link to a user's file"](dir);
    const r = await cli(['report', run.dir, '--out', link], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe(join(dir, 'precious.txt'));
    expect(await readFile(join(dir, 'precious.txt'), 'utf8')).toContain('</html>');
    expect(readdirSync(dir).sort()).toEqual(['link', 'precious.txt']);
  });

  it('a directory (or a link to one) gets report.html inside it', async () => {
    const dir = await fresh();
    const link = await KINDS['symbolic link to a directory'](dir);
    const r = await cli(['report', run.dir, '--out', link], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(dir, 'elsewhere'))).toEqual(['report.html']);
  });

  it('at the default path (<run-dir>/report.html, not named) a FIFO is refused and a link is replaced, never followed', async () => {
    const dir = await fresh();
    const runCopy = join(dir, 'run');
    execFileSync('cp', ['-r', run.dir, runCopy]);
    const fifo = join(runCopy, 'report.html');
    execFileSync('mkfifo', [fifo]);
    const refused = await cli(['report', runCopy], tmp);
    expect(refused.code, refused.stderr).toBe(2);
    expect(lstatSync(fifo).isFIFO()).toBe(true);

    execFileSync('rm', [fifo]);
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'not yours\n');
    await symlink(outside, fifo);
    const r = await cli(['report', runCopy], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(outside, 'utf8')).toBe('not yours\n');
    expect(lstatSync(fifo).isFile()).toBe(true);
  });
});

describe('autoresearch trajectory: trajectory.html is a default path', () => {
  let experimentDir: string;
  beforeAll(async () => {
    experimentDir = join(tmp, 'experiment');
    const r = await cli(['autoresearch', 'record', run.dir, '--experiment', 'out-target', '--experiment-dir', experimentDir], tmp);
    expect(r.code, r.stderr).toBe(0);
  });
  const trajectory = () => join(experimentDir, '_autoresearch', 'trajectory.html');
  const rerender = () => cli(['autoresearch', 'trajectory', '--experiment', 'out-target', '--experiment-dir', experimentDir], tmp);

  for (const kind of ['character device', 'FIFO', 'socket'] as const) {
    it.skipIf(needsRoot(kind) && !IS_ROOT)(`a ${title(kind)} there is refused, not renamed over`, async () => {
      execFileSync('rm', ['-f', trajectory()]);
      const made = await KINDS[kind](join(experimentDir, '_autoresearch'));
      execFileSync('mv', [made, trajectory()]);
      const before = fingerprint(trajectory());
      const r = await rerender();
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(trajectory());
      expect(fingerprint(trajectory())).toBe(before);
    });
  }

  it('a link there is replaced by the page; the file it pointed at is untouched', async () => {
    execFileSync('rm', ['-f', trajectory()]);
    const outside = join(tmp, 'outside-trajectory.txt');
    await writeFile(outside, 'not yours\n');
    await symlink(outside, trajectory());
    const r = await rerender();
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(outside, 'utf8')).toBe('not yours\n');
    expect(lstatSync(trajectory()).isFile()).toBe(true);
  });
});

describe('AtomicDir.commit: the last line of defence for every run-directory writer', () => {
  it('refuses to rename a staged run over a FIFO or a link that appeared after the checks, and leaves it', async () => {
    const { AtomicDir } = await import('../src/runs/export/atomic-dir.js');
    for (const kind of ['FIFO', 'symbolic link to a directory'] as const) {
      const dir = await fresh();
      const staged = await AtomicDir.create(dir, { hint: 'late' });
      await staged.write('index.jsonl', '');
      const made = await KINDS[kind](dir);
      const before = fingerprint(made);
      await expect(staged.commit(made.split('/').pop()!)).rejects.toMatchObject({ code: 'output-target' });
      expect(fingerprint(made)).toBe(before);
      await staged.abort();
    }
  });
});

describe('fixtures do not depend on /dev/null', () => {
  it("fixtures-repos/git-env.sh points GIT_CONFIG_GLOBAL at an empty file in the fixture's own directory", async () => {
    const dir = await fresh();
    const script = join(REPO_ROOT, 'fixtures-repos', 'git-env.sh');
    const value = execFileSync('bash', ['-c', 'dir="$1"; . "$2"; printf %s "$GIT_CONFIG_GLOBAL"', 'sh', dir, script]).toString();
    expect(value).toBe(join(dir, '.gitconfig-empty'));
    expect(lstatSync(value).isFile()).toBe(true);
    expect(readFileSync(value, 'utf8')).toBe('');
  });
});
