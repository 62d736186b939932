import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnsafeFileError } from '../src/errors/input-error.js';
import { describe, expect, it } from 'vitest';
import { absentAs, AgentvResultsError, DiskError, diskErrorOf, EXIT_CODE_BY_ERROR, exitCodeFor, isAbsent } from '../src/errors/errors.js';
import { exitCodeFor as cliExitCodeFor, failureText } from '../src/cli/errors.js';
import { CheckFailed, UsageError } from '../src/errors/cli-errors.js';
import { spawnSync } from 'node:child_process';
import { CLI_PATH } from './helpers/cli.js';
import { openRepo, tolerateLostRace } from '../src/git/index.js';
import {
  GitArgumentError,
  GitError,
  GitOutputError,
  GitVersionError,
  InvalidPathError,
  NotARepositoryError,
  RefConflictError,
  RemoteError,
} from '../src/errors/git-errors.js';
import { asHttpError } from '../src/serve/http-status.js';
import { readdirSync } from 'node:fs';
import { ConfigError } from '../src/errors/publish-errors.js';
import { LayoutError } from '../src/errors/read-errors.js';
import { acquirePublishLock } from '../src/repo/publish-lock.js';
import { LockError } from '../src/errors/publish-errors.js';
import { hostname } from 'node:os';
import { ReadError, RunExpiredError } from '../src/errors/read-errors.js';
import { resolveTarget } from '../src/repo/target.js';
import { PublishError } from '../src/errors/publish-errors.js';
import { CommandError } from '../src/errors/daemon-errors.js';
import { DaemonLockedError } from '../src/errors/daemon-errors.js';
import { Outbox, OUTBOX_DIR } from '../src/daemon/outbox.js';
import { OutboxError } from '../src/errors/daemon-errors.js';
import { readDaemonInfo } from '../src/daemon/instance-lock.js';
import { checkRunPath, checkRunPathSync } from '../src/runs/read/run-files.js';
import { readOptionalJson, readOptionalJsonSync, readRegularText, unreadableFile } from '../src/util/safe-open.js';
import { listProjects } from '../src/serve/projects.js';
import { findConfigFile } from '../src/repo/config.js';
import { RemoteState, remoteStatus } from '../src/serve/remote-api.js';
import { initRepo, isolateGitForSuite } from './helpers/git-fixtures.js';
import { InputError } from '../src/errors/input-error.js';
import { SourceError } from '../src/errors/read-errors.js';
import { FeedbackRevisionMismatch, OverlayInputError, TagRevisionMismatch } from '../src/errors/overlay-errors.js';
import { RunReadError } from '../src/errors/read-errors.js';
import { HttpError } from '../src/errors/serve-errors.js';
import { ServeError } from '../src/errors/serve-errors.js';
import { WipError } from '../src/errors/wip-errors.js';
import { SyncConflictError } from '../src/errors/publish-errors.js';

const CLI_DOC = join(import.meta.dirname, '..', 'docs', 'cli.md');
const GUIDE_DOC = join(import.meta.dirname, '..', 'docs', 'guide.md');

/** The "Exit codes" table of the CLI conventions (docs/cli.md) as { error code -> exit code }. */
function readmeExitTable(): Map<string, number> {
  const text = readFileSync(CLI_DOC, 'utf8');
  const section = text.slice(text.indexOf('## Exit codes'));
  const rows = section.split('\n').filter((l) => /^\| \d+ \|/.test(l));
  expect(rows.map((r) => r.split('|')[1]!.trim())).toEqual(['0', '1', '2', '3', '70']);
  const map = new Map<string, number>();
  for (const row of rows) {
    const cells = row.split('|').map((c) => c.trim());
    const exit = Number(cells[1]);
    for (const m of (cells[3] ?? '').matchAll(/`([a-z-]+)`/g)) {
      expect(map.has(m[1]!), `${m[1]} listed twice`).toBe(false);
      map.set(m[1]!, exit);
    }
  }
  return map;
}

/** The index of the bracket that closes the one opened just before `from`. */
function closing(text: string, from: number, open: string, close: string): number {
  let depth = 1;
  let i = from;
  for (; depth > 0 && i < text.length; i++) {
    if (text[i] === open) depth++;
    else if (text[i] === close) depth--;
  }
  return i - 1;
}

describe('one error model', () => {
  it('the documented exit-code table is the exported map, code for code', () => {
    expect(Object.fromEntries(readmeExitTable())).toEqual({ ...EXIT_CODE_BY_ERROR });
  });

  // Every failure class, built with representative data: each one is an AgentvResultsError whose
  // name is its class, whose code is in the map, and whose exit code is the map's.
  const samples: [Error, string, number][] = [
    [new UsageError('bad flag'), 'usage', 2],
    [new CheckFailed('regressed'), 'check-failed', 1],
    [new GitError(['git', 'status'], 128, 'fatal: boom'), 'git', 3],
    [new RemoteError(['git', 'fetch', 'origin'], 128, 'fatal: unable to access', 'unreachable'), 'remote', 3],
    [new GitVersionError('2.30.0', '2.38.0', 'git too old'), 'git-version', 3],
    [new RefConflictError('refs/heads/x', null, 'a'.repeat(40)), 'ref-conflict', 3],
    [new NotARepositoryError('/nowhere'), 'not-a-repository', 2],
    [new InvalidPathError('../etc/passwd', 'escapes the run'), 'invalid-path', 2],
    [new GitArgumentError('refusing to update "HEAD": not a full ref name under refs/'), 'git-argument', 2],
    [new GitOutputError('unexpected cat-file header'), 'git-output', 3],
    [new ReadError('run x is not on agentv/results/v1', 'not-found'), 'not-found', 2],
    [new ConfigError('bad config'), 'config', 2],
    [new ConfigError('no project "x"', { notFound: true }), 'not-found', 2],
    [new LayoutError('bad run id'), 'layout', 2],
    [new LockError('could not take the publish lock'), 'lock', 3],
    [new ReadError('no such run', 'input'), 'read-input', 2],
    [new ReadError('sha256 mismatch', 'check'), 'read-check', 1],
    [new ReadError('fetch failed', 'git'), 'read-git', 3],
    [
      new RunExpiredError('2026-01-05T09-00-00-000Z', {
        record: {
          id: '0123456789abcdef',
          at: '2027-01-06T00:00:00.000Z',
          policy: { keep_days: 365, keep_runs: null, keep_tags: ['baseline'] },
          removed: 1,
          from: [],
        },
        results: { branch: 'agentv/results/v1', tip: 'a'.repeat(40) },
        artifacts: null,
        path: '2026-01-05T09-00-00-000Z',
        commit: null,
      }),
      'run-expired',
      2,
    ],
    [new PublishError('push failed'), 'publish', 3],
    [new CommandError('no command given'), 'command', 2],
    [new DaemonLockedError('a daemon runs', null), 'daemon-locked', 1],
    [new OutboxError('could not lock the outbox'), 'outbox', 3],
    [new OutboxError('no space left', true), 'no-space', 3],
    [new InputError('x.jsonl:3: bad line', 'x.jsonl', 3), 'input', 2],
    [new SourceError('no such file'), 'source', 2],
    [new OverlayInputError('tag too long'), 'overlay-input', 2],
    [new OverlayInputError('run x has no test "t"', { notFound: true }), 'not-found', 2],
    [new TagRevisionMismatch('abc', 'def'), 'tag-revision-mismatch', 1],
    [new FeedbackRevisionMismatch('t1', 'ana', 'abc', null), 'feedback-revision-mismatch', 1],
    [new RunReadError('not a run workspace'), 'run-read', 2],
    [new HttpError(404, 'no such run'), 'http', 2],
    [new ServeError('refusing to listen'), 'serve', 2],
    [new WipError('no WIP branch'), 'wip', 2],
    [new SyncConflictError('cannot merge automatically even preferring the results branch'), 'sync-conflict', 1],
    [new WipError('no space left', true), 'no-space', 3],
    [new DiskError('no space left on the device', 'ENOSPC'), 'no-space', 3],
    [new DiskError('over quota', 'EDQUOT'), 'no-space', 3],
    [new DiskError('the filesystem is read-only', 'EROFS'), 'read-only', 3],
    [new WipError('x.log in the bucket does not match its pointer', false, true), 'read-check', 1],
    [new UnsafeFileError('config.yaml is a named pipe, not a regular file', 'config.yaml', 'not-regular'), 'input', 2],
  ];

  it.each(samples.map(([err, code, exit]) => [err.constructor.name, code, err, exit] as const))('%s has code %s', (className, code, err, exit) => {
    expect(err).toBeInstanceOf(AgentvResultsError);
    expect(err.name).toBe(className);
    expect((err as AgentvResultsError).code).toBe(code);
    expect(EXIT_CODE_BY_ERROR[code as keyof typeof EXIT_CODE_BY_ERROR]).toBe(exit);
    expect(exitCodeFor(err)).toBe(exit);
    // The CLI maps through the same function (it used to match constructor names, and missed some).
    expect(cliExitCodeFor(err)).toBe(exit);
  });

  it('the Dashboard API picks the HTTP status from the code, never from the message', () => {
    const expected = (code: string, exit: number) =>
      ({ 'not-found': 404, 'run-expired': 404, 'tag-revision-mismatch': 409, 'feedback-revision-mismatch': 409, 'read-check': 422 })[code] ??
      (exit === 2 ? 400 : exit === 3 ? 502 : 422);
    for (const [err, code, exit] of samples) {
      if (err instanceof HttpError) continue;
      expect(asHttpError(err).status, code).toBe(expected(code, exit));
    }
    // The same message under two codes answers two statuses: the message plays no part.
    expect(asHttpError(new ReadError('run x is not on the branch', 'input')).status).toBe(400);
    expect(asHttpError(new ReadError('run x is not on the branch', 'not-found')).status).toBe(404);
    expect(asHttpError(new TypeError('a bug')).status).toBe(500);
    expect(asHttpError(new HttpError(418, 'teapot')).status).toBe(418);
  });

  it('no plain `throw new Error` (nor `reject(new Error`) in src/ unless a comment right above says why it is not a user-facing failure', () => {
    const unjustified: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) {
          const lines = readFileSync(p, 'utf8').split('\n');
          lines.forEach((l, i) => {
            // A rejection is a throw too (a promise's `reject(new Error(...))` reaches the caller the same way).
            if (/(?:throw|reject\()\s*new Error\(/.test(l) && !/plain Error on purpose|Browser code/.test(lines[i - 1] ?? ''))
              unjustified.push(`${p}:${i + 1}`);
          });
        }
      }
    };
    walk(join(import.meta.dirname, '..', 'src'));
    expect(unjustified).toEqual([]);
  });

  it('every AgentvResultsError class is defined in src/errors/ (which imports nothing else) and declares its typed data', () => {
    const SRC = join(import.meta.dirname, '..', 'src');
    const classes = new Map<string, { file: string; base: string; typed: boolean }>();
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts')) continue;
      const text = readFileSync(join(SRC, rel), 'utf8');
      for (const m of text.matchAll(/\bclass (\w+)(?:<[^>]*>)? extends (\w+)(<)?/g)) classes.set(m[1]!, { file: rel, base: m[2]!, typed: m[3] === '<' });
    }
    const ours = (name: string, seen = 0): boolean => {
      if (name === 'AgentvResultsError') return true;
      const c = classes.get(name);
      return c !== undefined && seen < 20 && ours(c.base, seen + 1);
    };
    const family = [...classes].filter(([name]) => name !== 'AgentvResultsError' && ours(name));
    expect(family.length).toBeGreaterThan(35);
    // One place: a class of the error model defined anywhere else is a second home.
    expect(family.filter(([, c]) => !c.file.startsWith('errors/')).map(([n, c]) => `${n} in src/${c.file}`)).toEqual([]);
    // Typed data: each direct subclass names its data type (AgentvResultsError<{ ... }>); a subclass of one of them inherits or narrows it.
    expect(family.filter(([, c]) => c.base === 'AgentvResultsError' && !c.typed).map(([n, c]) => `${n} in src/${c.file}`)).toEqual([]);
    // errors/ is layer 0: it imports only its own files and node's.
    const outside: string[] = [];
    for (const rel of readdirSync(join(SRC, 'errors'))) {
      const text = readFileSync(join(SRC, 'errors', rel), 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) if (!/^(\.\/|node:)/.test(m[1]!)) outside.push(`src/errors/${rel}: ${m[1]}`);
    }
    expect(outside).toEqual([]);
    // One home also for importers: no module but errors/ itself and the package root re-exports a class of the family.
    const names = new Set(family.map(([n]) => n));
    const reexports: string[] = [];
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || rel.startsWith('errors/') || rel === 'index.ts') continue;
      const text = readFileSync(join(SRC, rel), 'utf8');
      for (const m of text.matchAll(/export\s*\{([^}]*)\}/g))
        for (const n of m[1]!.split(',').map(
          (s) =>
            s
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        ))
          if (names.has(n)) reexports.push(`src/${rel}: ${n}`);
    }
    expect(reexports).toEqual([]);
  });

  it('errors carry what, where and why as data, and the fields they had are still there', () => {
    const git = new GitError(['git', 'push', 'https://me:s3cret@example.com/r.git'], 128, 'fatal: no', undefined, { cwd: '/repo', how: 'exit' });
    expect(git.data).toMatchObject({ exitCode: 128, stderr: 'fatal: no', cwd: '/repo', how: 'exit' });
    // The data is redacted as the message is: no credential kept.
    expect(JSON.stringify(git.data)).not.toContain('s3cret');
    expect([git.argv, git.exitCode, git.stderr]).toEqual([git.data.argv, 128, 'fatal: no']);
    const remote = new RemoteError(['git', 'fetch', '--prune', 'origin', 'refs/heads/x'], 128, 'fatal: unable to access', 'unreachable');
    expect(remote.data).toMatchObject({ remote: 'origin', kind: 'unreachable', exitCode: 128 });
    expect(remote.kind).toBe('unreachable');
    expect(new ReadError('run x is not on the branch', 'not-found', { runId: 'x' }).data).toEqual({ kind: 'not-found', runId: 'x' });
    expect(new InputError('x.jsonl:3: bad line', 'x.jsonl', 3).data).toEqual({ path: 'x.jsonl', line: 3 });
    expect(new LockError('lost', { data: { path: '/r/.git/agentv-results/publish.lock', holder: { pid: 7, host: 'h' } } }).data.holder).toEqual({
      pid: 7,
      host: 'h',
    });
    expect(new ConfigError('bad', { file: '/r/.agentv/config.yaml' }).data).toEqual({ notFound: false, file: '/r/.agentv/config.yaml' });
    expect(new UnsafeFileError('x is unreadable', 'x', 'unreadable', 'EACCES').data).toEqual({ path: 'x', reason: 'unreadable', errno: 'EACCES' });
    expect(new PublishError('push failed', { data: { result: { runId: 'r1' } } }).data.result).toEqual({ runId: 'r1' });
    expect(new DiskError('full', 'ENOSPC', { cause: Object.assign(new Error('full'), { code: 'ENOSPC', path: '/r/f' }) }).data).toEqual({
      errno: 'ENOSPC',
      path: '/r/f',
    });
    const w = new WipError('gone', false, false, { runDir: '/runs/a' });
    expect([w.noSpace, w.data]).toEqual([false, { noSpace: false, corrupt: false, runDir: '/runs/a' }]);
    // Every sample of the model carries an object as data, never undefined.
    for (const [err] of samples) expect(typeof (err as AgentvResultsError).data, err.constructor.name).toBe('object');
  });

  it('src/git throws no plain Error at all: what a user can reach there is a GitError or one of its family (exit 2 or 3, never 70)', () => {
    const GIT = join(import.meta.dirname, '..', 'src', 'git');
    const plain: string[] = [];
    for (const rel of readdirSync(GIT, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts')) continue;
      readFileSync(join(GIT, rel), 'utf8')
        .split('\n')
        .forEach((l, i) => {
          if (/new (Error|TypeError|RangeError)\(/.test(l)) plain.push(`src/git/${rel}:${i + 1}`);
        });
    }
    expect(plain).toEqual([]);
  });

  it('a message names what it is about when it is made, never rewritten afterwards: no `.message =` in src/, no text with one name split out for another', () => {
    // A run read from a copy is named by the name its user knows it by where the message is made
    // (util/run-shown.ts: the reader is given `shownAs`), so its error's data names it too.
    const SRC = join(import.meta.dirname, '..', 'src');
    const rewritten: string[] = [];
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts')) continue;
      readFileSync(join(SRC, rel), 'utf8')
        .split('\n')
        .forEach((l, i) => {
          // `.split(<a name>).join(<a name>)`: one value put for another in a text (a literal mask such as '***' is redaction, not renaming).
          if (/\.message\s*=[^=]/.test(l) || /\.split\(\w[^)]*\)\.join\(\s*\w/.test(l)) rewritten.push(`src/${rel}:${i + 1}`);
        });
    }
    expect(rewritten).toEqual([]);
  });

  it('a catch around a file read that swallows its failure tests for absence (ENOENT/ENOTDIR), or says it means any failure', () => {
    const SRC = join(import.meta.dirname, '..', 'src');
    // A read of the filesystem: what can fail with "absent" and with "unreadable" alike.
    const READS =
      /\b(readRegularText|readRegularTextSync|readRegularFile|readRegularFileSync|openRegularFile|readFile|readFileSync|stat|statSync|lstat|lstatSync|readdir|readdirSync|open|openSync|realpath|realpathSync|realpathSync\.native|access|accessSync|readlink|readlinkSync)\(/;
    // It tests absence, rethrows, or hands the error on: not a swallow.
    const judges = (body: string, errVar: string | undefined) =>
      /\bthrow\b|\bisAbsent\b|\babsentAs\b|'ENOENT'|'NotFound'/.test(body) || (errVar !== undefined && new RegExp(`\\b${errVar}\\b`).test(body));
    // A swallow of every failure is allowed only when it says so: "unreadable", "any failure", "best effort".
    const SAYS_ANY = /\bunreadable\b|not readable|any failure|best effort/i;
    const opening = (text: string, from: number): number => {
      let depth = 0;
      for (let j = from; j >= 0; j--) {
        if (text[j] === '}') depth++;
        else if (text[j] === '{' && --depth === 0) return j;
      }
      return 0;
    };
    const swallowed: string[] = [];
    let reads = 0;
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || /^(serve|report)\/client\//.test(rel)) continue;
      const text = readFileSync(join(SRC, rel), 'utf8');
      const lines = text.split('\n');
      const reasonAt = (at: number, body: string): string => {
        const line = text.slice(0, at).split('\n').length;
        const near = [lines[line - 1]!, ...lines.slice(Math.max(0, line - 4), line - 1)];
        return `${body} ${near.join(' ')}`;
      };
      const judge = (at: number, read: string, body: string, errVar: string | undefined): void => {
        if (!READS.test(read)) return;
        reads++;
        if (judges(body, errVar) || SAYS_ANY.test(reasonAt(at, body))) return;
        swallowed.push(`src/${rel}:${text.slice(0, at).split('\n').length}`);
      };
      // try { <read> } catch (e) { <body> }
      for (const m of text.matchAll(/\}\s*catch\s*(?:\(\s*(\w+)[^)]*\))?\s*\{/g)) {
        const start = m.index + m[0].length;
        judge(m.index, text.slice(opening(text, m.index), m.index), text.slice(start, closing(text, start, '{', '}')), m[1]);
      }
      // <read>.catch(handler) and <read>.then(ok, handler)
      for (const m of text.matchAll(/\.(catch|then)\(/g)) {
        const start = m.index + m[0].length;
        const args = text.slice(start, closing(text, start, '(', ')'));
        let handler = args;
        if (m[1] === 'then') {
          let depth = 0;
          let comma = -1;
          for (let i = 0; i < args.length && comma < 0; i++) {
            if ('([{'.includes(args[i]!)) depth++;
            else if (')]}'.includes(args[i]!)) depth--;
            else if (args[i] === ',' && depth === 0) comma = i;
          }
          if (comma < 0) continue;
          handler = args.slice(comma + 1);
        }
        const receiver = text.slice(Math.max(text.lastIndexOf(';', m.index), text.lastIndexOf('{\n', m.index), text.lastIndexOf('}\n', m.index)) + 1, m.index);
        const param = /^\s*(?:async\s*)?\(?\s*(\w+)/.exec(handler);
        judge(m.index, receiver, handler, handler.trim().startsWith('()') ? undefined : param?.[1]);
      }
    }
    expect(reads).toBeGreaterThan(30);
    expect(swallowed, 'a read failure taken for "absent" (or "none") without testing ENOENT').toEqual([]);
  });

  it('every catch in src/ that neither rethrows nor uses the error says in a comment why it may swallow', () => {
    // The pages' browser code is not the library's error model.
    const BROWSER = new Set(['serve/page.ts', 'report/template.ts', 'autoresearch/trajectory-html.ts']);
    const SRC = join(import.meta.dirname, '..', 'src');
    // An exemption names a file that exists: one that is gone exempts nothing and is dropped.
    for (const rel of BROWSER) expect(existsSync(join(SRC, rel)), rel).toBe(true);
    const silent: string[] = [];
    // "Absent" means ENOENT: a catch whose comment gives absence as its reason tests for it
    // (isAbsent/absentAs, or the code itself; an object store's NotFound is its ENOENT) and lets
    // anything else (EACCES, EISDIR, ELOOP, EIO) through. A catch that means "any failure here is
    // fine" says so, and why, without claiming absence.
    const claimsAbsent: string[] = [];
    const commentsOf = (s: string): string => [...s.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)].map((c) => c[0]).join(' ');
    let absentSeen = 0;
    let seen = 0;
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || BROWSER.has(rel) || /^(serve|report)\/client\//.test(rel)) continue;
      const text = readFileSync(join(SRC, rel), 'utf8');
      const lines = text.split('\n');
      const check = (at: number, bodyStart: number, bodyEnd: number, errVar: string | undefined): void => {
        seen++;
        const body = text.slice(bodyStart, bodyEnd);
        const line = text.slice(0, at).split('\n').length;
        const rethrows = /\bthrow\b/.test(body);
        const usesError = errVar !== undefined && new RegExp(`\\b${errVar}\\b`).test(body);
        const before = (lines[line - 2] ?? '').trim();
        const says = /\/\/|\/\*/.test(body) || lines[line - 1]!.includes('//') || before.startsWith('//') || before.startsWith('*');
        if (!rethrows && !usesError && !says) silent.push(`src/${rel}:${line}`);
        const above: string[] = [];
        for (let i = line - 2; i >= Math.max(0, line - 5); i--) {
          const l = lines[i]!.trim();
          if (!/^(\/\/|\/\*|\*)/.test(l)) break;
          above.unshift(l);
        }
        const reason = `${commentsOf(body)} ${commentsOf(lines[line - 1]!)} ${above.join(' ')}`;
        if (/\babsent\b|\bmissing\b|does not exist|\bno such\b/i.test(reason)) {
          absentSeen++;
          if (!/\bisAbsent\b|\babsentAs\b|'ENOENT'|'NotFound'/.test(`${body} ${lines[line - 1]}`)) claimsAbsent.push(`src/${rel}:${line}`);
        }
      };
      for (const m of text.matchAll(/catch\s*(?:\(\s*(\w+)[^)]*\))?\s*\{/g)) {
        if (text[m.index - 1] === '.') continue;
        const start = m.index + m[0].length;
        check(m.index, start, closing(text, start, '{', '}'), m[1]);
      }
      for (const m of text.matchAll(/\.catch\(/g)) {
        const start = m.index + m[0].length;
        const end = closing(text, start, '(', ')');
        const param = /^\s*\(?\s*(\w+)/.exec(text.slice(start, end));
        check(m.index, start, end, text.slice(start, end).trim().startsWith('()') ? undefined : param?.[1]);
      }
    }
    expect(seen).toBeGreaterThan(200);
    expect(silent).toEqual([]);
    expect(absentSeen).toBeGreaterThan(50);
    expect(claimsAbsent, 'a catch says "absent" but does not test ENOENT').toEqual([]);
  });

  it('"absent" means ENOENT: absentAs gives its value only for a missing path; an unreadable outbox journal is named, not read as empty; daemon.json and run paths likewise', async () => {
    const enoent = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const eacces = Object.assign(new Error('permission denied'), { code: 'EACCES' });
    expect(absentAs(null)(enoent)).toBeNull();
    expect(() => absentAs(null)(eacces)).toThrow('permission denied');
    expect([isAbsent(enoent), isAbsent(eacces), isAbsent(new TypeError('a bug'))]).toEqual([true, false, false]);
    const dir = mkdtempSync(join(tmpdir(), 'outbox-absent-'));
    try {
      const file = join(dir, 'outbox.jsonl');
      expect(await new Outbox(file).items()).toEqual([]);
      // Not a file (a directory where the journal should be): not an empty outbox.
      mkdirSync(file);
      await expect(new Outbox(file).items()).rejects.toThrow(OutboxError);
      await expect(new Outbox(file).items()).rejects.toThrow(/cannot read the outbox journal/);
      // daemon.json: absent or torn is "no daemon"; a directory in its place is not.
      const common = join(dir, 'common');
      mkdirSync(join(common, OUTBOX_DIR), { recursive: true });
      expect(await readDaemonInfo(common)).toBeNull();
      writeFileSync(join(common, OUTBOX_DIR, 'daemon.json'), '{"pid": 1');
      expect(await readDaemonInfo(common)).toBeNull();
      rmSync(join(common, OUTBOX_DIR, 'daemon.json'));
      mkdirSync(join(common, OUTBOX_DIR, 'daemon.json'));
      await expect(readDaemonInfo(common)).rejects.toThrow(UnsafeFileError);
      // A run path: a parent that is a file is absent (ENOTDIR); a loop of links is a bad path, not a missing file.
      const run = join(dir, 'run');
      mkdirSync(run);
      writeFileSync(join(run, 'index.jsonl'), '');
      symlinkSync('loop', join(run, 'loop'));
      expect(checkRunPathSync(run, 'index.jsonl/x')).toEqual({ kind: 'missing' });
      expect(checkRunPathSync(run, 'nope.json')).toEqual({ kind: 'missing' });
      expect(checkRunPathSync(run, 'loop/x')).toEqual({ kind: 'bad', message: 'loop/x is a loop of symbolic links' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('"unreadable" is not "absent": a directory or a pipe where a file is expected is named, a missing file is absent, a torn one unparsable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'unreadable-'));
    try {
      const file = join(dir, 'summary.json');
      // absent, then torn: no document (the callers' default)
      expect(await readOptionalJson(file, { kind: 'run-file' })).toBeUndefined();
      expect(readOptionalJsonSync(join(dir, 'nested', 'x.json'), { kind: 'run-file' })).toBeUndefined();
      writeFileSync(file, '{"run_id": "a"');
      expect(await readOptionalJson(file, { kind: 'run-file' })).toBeUndefined();
      writeFileSync(file, '{"run_id": "a"}');
      expect(await readOptionalJson(file, { kind: 'run-file' })).toEqual({ run_id: 'a' });
      // a directory where the file should be (EISDIR's case), and a named pipe: refused with its data, not "none"
      rmSync(file);
      mkdirSync(file);
      const asDir = await readOptionalJson(file, { kind: 'run-file' }).catch((e: unknown) => e);
      expect(asDir).toBeInstanceOf(UnsafeFileError);
      expect((asDir as UnsafeFileError).data).toEqual({ path: file, reason: 'not-regular' });
      const fifo = join(dir, 'timing.json');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      expect(() => readOptionalJsonSync(fifo, { kind: 'run-file' })).toThrow(UnsafeFileError);
      // a file the system will not open (a loop of links: ELOOP, which root meets too) is unreadable, named with its errno, exit 2 (it was exit 70, "a bug")
      const self = join(dir, 'self.json');
      symlinkSync('self.json', self);
      const loopErr = await readOptionalJson(self, { kind: 'run-file' }).catch((e: unknown) => e);
      expect(loopErr).toBeInstanceOf(UnsafeFileError);
      expect([(loopErr as UnsafeFileError).data, exitCodeFor(loopErr)]).toEqual([{ path: self, reason: 'unreadable', errno: 'ELOOP' }, 2]);
      await expect(readRegularText(self, { kind: 'run-file' })).rejects.toThrow(/self\.json cannot be read \(ELOOP/);
      // EACCES the same way (tests may run as root, where chmod 000 denies nothing: the errno is made here)
      const denied = unreadableFile('/r/summary.json', {}, Object.assign(new Error('permission denied'), { code: 'EACCES' })) as UnsafeFileError;
      expect([denied.data, exitCodeFor(denied)]).toEqual([{ path: '/r/summary.json', reason: 'unreadable', errno: 'EACCES' }, 2]);
      // The Dashboard's project picker: a pipe as the configuration is named (it read as "no projects").
      const project = join(dir, 'project');
      mkdirSync(join(project, '.agentv'), { recursive: true });
      expect(spawnSync('mkfifo', [join(project, '.agentv', 'config.yaml')]).status).toBe(0);
      await expect(listProjects({ cwd: project })).rejects.toThrow(UnsafeFileError);
      // Looking for the configuration: a .agentv that is a loop of links is a ConfigError naming it (it read as "no configuration": AgentV's defaults).
      const looped = join(dir, 'looped');
      mkdirSync(looped);
      symlinkSync('.agentv', join(looped, '.agentv'));
      const lookErr = await findConfigFile(looped).catch((e: unknown) => e);
      expect(lookErr).toBeInstanceOf(ConfigError);
      expect((lookErr as ConfigError).data).toEqual({ notFound: false, file: join(looped, '.agentv', 'config.yaml') });
      // A run path through a loop of links is a bad path, as the sync twin says (it read as "missing").
      const run = join(dir, 'run');
      mkdirSync(run);
      symlinkSync('loop', join(run, 'loop'));
      expect(await checkRunPath(run, 'loop/x')).toEqual({ kind: 'bad', message: 'loop/x is a loop of symbolic links' });
      expect(await checkRunPath(run, 'nope.json')).toEqual({ kind: 'missing' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("the Dashboard's remote status", () => {
    isolateGitForSuite();
    it("a configuration that cannot be read is its error (400), never AgentV's defaults", async () => {
      const repo = await initRepo();
      mkdirSync(join(repo, '.agentv', 'config.yaml'), { recursive: true });
      const err = await remoteStatus({ cwd: repo }, new RemoteState()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentvResultsError);
      expect(asHttpError(err).status).toBe(400);
      expect((err as Error).message).toMatch(/config\.yaml is a directory/);
    });
  });

  it('a publish lock held by a live process is a LockError whose data names the lock and its holder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lock-data-'));
    const held = await acquirePublishLock(dir);
    try {
      const err = await acquirePublishLock(dir, { waitMs: 0 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockError);
      expect((err as LockError).data).toEqual({ path: join(dir, 'agentv-results.lock.lock'), holder: { pid: process.pid, host: hostname() } });
    } finally {
      await held.release();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('LockError, OutboxError and InvalidPathError are not "check failed" (they used to exit 1)', () => {
    expect(cliExitCodeFor(new LockError('lost'))).toBe(3);
    expect(cliExitCodeFor(new OutboxError('could not lock'))).toBe(3);
    expect(cliExitCodeFor(new InvalidPathError('a/../../b', 'escapes'))).toBe(2);
  });

  it('a tracking ref update tolerates only a lost compare-and-swap; any other failure still throws', () => {
    expect(() => tolerateLostRace(new RefConflictError('refs/remotes/origin/agentv/x', 'a'.repeat(40), 'b'.repeat(40)))).not.toThrow();
    expect(() => tolerateLostRace(new GitError(['git', 'update-ref'], 128, 'fatal: unable to write'))).toThrow(GitError);
    expect(() => tolerateLostRace(new TypeError('a bug'))).toThrow(TypeError);
  });

  it('errors keep their data as typed fields', () => {
    const e = new RefConflictError('refs/heads/agentv/results/v1', 'a'.repeat(40), null);
    expect([e.ref, e.expected, e.actual]).toEqual(['refs/heads/agentv/results/v1', 'a'.repeat(40), null]);
    const w = new WipError('full', true);
    expect(w.noSpace).toBe(true);
  });

  it('foreign errors: zod is bad input, a full disk is the environment, anything else a bug (70, not a failed check)', () => {
    const zodLike = Object.assign(new Error('invalid'), { name: 'ZodError' });
    expect(exitCodeFor(zodLike)).toBe(2);
    expect(exitCodeFor(Object.assign(new Error('write failed'), { code: 'ENOSPC' }))).toBe(3);
    expect(exitCodeFor(Object.assign(new Error('write failed'), { code: 'EROFS' }))).toBe(3);
    const rofs = Object.assign(new Error("EROFS: read-only file system, open '/x/y'"), { code: 'EROFS', path: '/x/y' });
    expect(failureText(rofs)).toBe(
      'agentv-results: the filesystem is read-only (EROFS) while writing /x/y; nothing half-written is taken as done — make it writable or choose another place and run the command again\n',
    );
    expect((diskErrorOf(rofs, '/x/y') as DiskError).code).toBe('read-only');
    expect(exitCodeFor(new TypeError('bug'))).toBe(70);
    expect(exitCodeFor(Object.assign(new Error('permission denied'), { code: 'EACCES' }))).toBe(70);
    expect(Object.values(EXIT_CODE_BY_ERROR)).not.toContain(70);
    const text = failureText(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(text).toMatch(/^agentv-results: internal error: TypeError: Cannot read properties/);
    expect(text).toMatch(/this is a bug in agentv-results, not a failed check: please report it with the command you ran/);
    expect(failureText(new UsageError('bad flag'))).toBe('agentv-results: bad flag\n');
  });

  it('the CLI exits 70 on an unexpected system error (its working directory removed), saying it is a bug', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avr-gone-'));
    rmSync(dir, { recursive: true });
    const r = spawnSync(process.execPath, [CLI_PATH, 'gate', 'a.jsonl', 'b.jsonl'], {
      cwd: tmpdir(),
      encoding: 'utf8',
      shell: false,
      env: { ...process.env, GONE: dir },
    });
    expect(r.status).toBe(2); // control: a missing file is bad input
    const crash = spawnSync('bash', ['-c', 'mkdir "$GONE" && cd "$GONE" && rmdir "$GONE" && exec "$NODE" "$CLI" gate a.jsonl b.jsonl'], {
      encoding: 'utf8',
      env: { ...process.env, GONE: dir, NODE: process.execPath, CLI: CLI_PATH },
    });
    expect(crash.status, crash.stderr).toBe(70);
    expect(crash.stderr).toMatch(/internal error: .*uv_cwd/);
    expect(crash.stderr).toMatch(/this is a bug in agentv-results/);
  });

  it('not a git repository is an input error (exit 2), as the guide says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avr-notrepo-'));
    try {
      await expect(openRepo(dir)).rejects.toBeInstanceOf(NotARepositoryError);
      const err = await resolveTarget({ cwd: dir, env: { ...process.env, GIT_CEILING_DIRECTORIES: tmpdir() } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentvResultsError);
      expect(exitCodeFor(err)).toBe(2);
      const doc = readFileSync(GUIDE_DOC, 'utf8');
      expect(doc).toMatch(/\| not a git repository \| exit 2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('public verbs check their options at the boundary', () => {
  it('a wrong type is one InvalidArgumentsError naming the field (exit 2), not a TypeError inside', async () => {
    const { exportRun } = await import('../src/runs/export/export.js');
    const { publish } = await import('../src/publish/publish.js');
    const { compareRuns } = await import('../src/compare/compare.js');
    const { listRuns } = await import('../src/branch-read/list.js');
    const { site } = await import('../src/site/build.js');
    const { compareTargets } = await import('../src/compare/compare.js');
    const { migrateStorage } = await import('../src/archive/storage-migrate.js');
    const { moveTag } = await import('../src/overlay-write/move-tag.js');
    const { renderTrajectory } = await import('../src/autoresearch/record.js');
    const { gateCheck } = await import('../src/gate/gate-check.js');
    const { InvalidArgumentsError } = await import('../src/errors/errors.js');
    const cases: [Promise<unknown>, RegExp][] = [
      [compareTargets({ run: 'r', baseline: 7 } as never), /^compareTargets: invalid options: baseline: /],
      [migrateStorage({ dryRun: 'no' } as never), /^migrateStorage: invalid options: dryRun: /],
      [moveTag({ runId: 'r', tag: ['baseline'] } as never), /^moveTag: invalid options: tag: /],
      [renderTrajectory({ experiment: 'e', final: 1 } as never), /^renderTrajectory: invalid options: final: /],
      [gateCheck({ baseline: 'a', candidate: 'b', missingBaseline: 'maybe' } as never), /^gateCheck: invalid options: missingBaseline: /],
      [exportRun({ source: 42 } as never), /^exportRun: invalid options: source: /],
      [exportRun({ source: 'x.jsonl', out: 2026 } as never), /out: /],
      [publish({ run: 'r', push: 'yes' } as never), /^publish: invalid options: push: /],
      [publish({ run: 'r', onStep: 'log' } as never), /^publish: invalid options: onStep: /],
      [exportRun({ source: 'x.jsonl', layout: 5 } as never), /^exportRun: invalid options: layout: /],
      [compareRuns({ baseline: 'a', candidate: 'b', targets: 'gpt' } as never), /^compareRuns: invalid options: targets: /],
      [listRuns({ limit: '20' } as never), /^listRuns: invalid options: limit: /],
      [listRuns({ tag: 'nightly' } as never), /^listRuns: invalid options: tag: /],
      [compareRuns({ baseline: 'a', candidate: 'b', order: 'newest' } as never), /^compareRuns: invalid options: order: /],
      [site({ out: 3 } as never), /^site: invalid options: out: /],
      [site({ out: 'site', onProgress: 'log' } as never), /^site: invalid options: onProgress: /],
    ];
    for (const [p, message] of cases) {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidArgumentsError);
      expect((err as Error).message).toMatch(message);
      expect(exitCodeFor(err)).toBe(2);
    }
  });
});
