// The package's public surface, as a user's program imports it: by name, through package.json's
// "exports" (node resolves a package's own name from inside it), from the built dist/.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function exportsOf(specifier: string): Record<string, string> {
  const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]))));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

describe('public API', () => {
  it('exports the verbs a program needs from the package root', () => {
    const api = exportsOf('agentv-results');
    const verbs = [
      'exportRun',
      'loadRun',
      'summarizeRun',
      'listFailures',
      'showCases',
      'validateRun',
      'combineRuns',
      'deleteRuns',
      'generateReport',
      'compareRuns',
      'gateRuns',
      'resolveRunNames',
      'trend',
      'recordCycle',
      'publish',
      'sync',
      'resolveSyncBranch',
      'listRuns',
      'pull',
      'status',
      'editTags',
      'readTags',
      'setFeedback',
      'readFeedback',
      'checkpointWip',
      'listWipBranches',
      'recoverWipRun',
      'cleanWipBranches',
      'gateCheck',
      'compareTargets',
      'migrateStorage',
      'moveTag',
      'renderTrajectory',
      'WipSession',
      'runDaemon',
      'execRun',
      'startServer',
      'rollover',
      'rolloverAndPush',
      'expireRuns',
      'expireAndPush',
    ];
    for (const v of verbs) expect(api[v], v).toBe('function');
    // A caller tells failures apart by class and code, not by message text.
    for (const e of ['AgentvResultsError', 'InvalidArgumentsError', 'exitCodeFor']) expect(api[e], e).toBe('function');
  });

  it('keeps plumbing private', () => {
    const api = exportsOf('agentv-results');
    for (const internal of [
      'listWip',
      'recoverWip',
      'cleanWip',
      'runGit',
      'writeCommit',
      'pushBranches',
      'integrateRemote',
      'splitRun',
      'mergeJsonl',
      'IndexRowSchema',
    ]) {
      expect(api[internal], internal).toBeUndefined();
    }
    // Beside the error classes a caller can meet (issue 28 exports them all) and the verbs' option
    // schemas (each verb's options type is inferred from its schema), the root stays small: the
    // verbs (the wip verbs and the gate among them), the Markdown renderers of the verdict commands, the daemon's logger and webhook, a few defaults (issue 41: 70 then).
    const verbsAndConstants = Object.keys(api).filter((k) => !/(Error|Mismatch|Schema)$/.test(k));
    expect(verbsAndConstants.length).toBeLessThan(80);
    for (const schema of Object.keys(api).filter((k) => k.endsWith('Schema'))) expect(api[schema], schema).toBe('object');
  });

  it('exports no internal type, and the published option types name none (their @internal members are stripped)', () => {
    // The names dist/index.d.ts exports, types included (the import above sees only values).
    const dts = (rel: string) => ts.createSourceFile(rel, readFileSync(join(ROOT, 'dist', rel), 'utf8'), ts.ScriptTarget.ES2022, true);
    const exported = new Set<string>();
    for (const s of dts('index.d.ts').statements)
      if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) for (const e of s.exportClause.elements) exported.add(e.name.text);
    // The reading works: public types and values are there.
    for (const name of ['publish', 'PublishOptions', 'TargetOptions', 'WipSessionOptions', 'SyncFetch', 'ListResult'])
      expect(exported.has(name), name).toBe(true);
    // A handle on a repository, the target it resolves to, the checkpointer, the S3 client and the merge's test hook are the package's own.
    for (const name of ['Repo', 'PublishTarget', 'PathResolver', 'Checkpointer', 'ObjectStore', 'PutOutcome']) expect(exported.has(name), name).toBe(false);
    // The members that carried them are not in the published declarations.
    const members = (rel: string, name: string) => {
      const decl = dts(rel).statements.find(
        (s): s is ts.InterfaceDeclaration | ts.ClassDeclaration => (ts.isInterfaceDeclaration(s) || ts.isClassDeclaration(s)) && s.name?.text === name,
      );
      expect(decl, `${name} in dist/${rel}`).toBeDefined();
      return decl!.members.map((m) => m.name?.getText() ?? '');
    };
    expect(members('repo/target.d.ts', 'TargetOptions')).toEqual(['cwd', 'env', 'remote', 'configFile', 'project', 'overrides']);
    const session = members('wip/session.d.ts', 'WipSessionOptions');
    expect(session).toContain('runDir');
    for (const internal of ['repo', 'remoteName', 'store', 'heavyBytes']) expect(session, internal).not.toContain(internal);
    expect(members('wip/session.d.ts', 'WipSession')).not.toContain('checkpointer');
    for (const [rel, name] of [
      ['sync/sync.d.ts', 'SyncOptions'],
      ['archive/rollover.d.ts', 'RolloverOptions'],
      ['archive/retention.d.ts', 'RetentionOptions'],
    ] as const)
      expect(members(rel, name), name).not.toContain('target');
    expect(members('sync/push-branches.d.ts', 'PushBranchesOptions')).not.toContain('resolver');
  });

  it('exports every error class a caller can meet, each an AgentvResultsError with a code', () => {
    const script = `const m = await import('agentv-results'); const out = {}; for (const [k, v] of Object.entries(m)) if (/(Error|Mismatch)$/.test(k) && k !== 'AgentvResultsError') out[k] = typeof v === 'function' && v.prototype instanceof m.AgentvResultsError; console.log(JSON.stringify(out));`;
    const classes = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })) as Record<
      string,
      boolean
    >;
    for (const name of [
      'GitError',
      'RemoteError',
      'RefConflictError',
      'GitArgumentError',
      'GitOutputError',
      'ReadError',
      'RunExpiredError',
      'LockError',
      'OverlayInputError',
      'OutputTargetError',
      'UnsafeFileError',
    ])
      expect(classes[name], name).toBe(true);
    expect(Object.entries(classes).filter(([, ok]) => !ok)).toEqual([]);
  });

  it('offers the schemas and the merges as documented subpath entries', () => {
    const schemas = exportsOf('agentv-results/schemas');
    expect(schemas.IndexRowSchema).toBe('object');
    expect(schemas.jsonSchema).toBe('function');
    const merge = exportsOf('agentv-results/merge');
    expect(merge.mergeJsonl).toBe('function');
    expect(merge.mergeJson).toBe('function');
  });

  it('does not expose internal modules by deep path', () => {
    expect(() => exportsOf('agentv-results/dist/git/index.js')).toThrow();
  });
});
