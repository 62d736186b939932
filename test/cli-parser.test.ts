/**
 * The command-line parser as a user meets it: values stay as typed, an unknown option or a
 * missing argument is a usage error (exit 2) with the usage line, and subcommands are real.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { RESULTS_REF, cli, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

isolateGitForSuite();

async function resultsFile(dir: string): Promise<string> {
  const rows = [1, 2].map((i) => JSON.stringify({ test_id: `t${i}`, target: 'a', score: i / 2, timestamp: `2026-03-01T10:00:0${i}Z` }));
  const file = join(dir, 'x.jsonl');
  await writeFile(file, rows.join('\n') + '\n');
  return file;
}

describe('values stay as typed', () => {
  it('export --out 2026 --experiment 007 writes ./2026 for experiment "007"', async () => {
    const dir = await makeTempDir();
    await resultsFile(dir);
    const r = await runCli(['export', 'x.jsonl', '--out', '2026', '--experiment', '007', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { out: string; experiment: string };
    expect(out.out).toBe(join(dir, '2026'));
    expect(out.experiment).toBe('007');
    const summary = JSON.parse(await readFile(join(dir, '2026', 'summary.json'), 'utf8')) as { metadata: { experiment: string } };
    expect(summary.metadata.experiment).toBe('007');
  });

  it('a repeated string option is a list (show --test-id 001 --test-id 002)', async () => {
    const dir = await makeTempDir();
    const file = await resultsFile(dir);
    await writeFile(
      file,
      ['001', '002', '003'].map((id) => JSON.stringify({ test_id: id, target: 'a', score: 1, timestamp: '2026-03-01T10:00:00Z' })).join('\n') + '\n',
    );
    expect((await runCli(['export', 'x.jsonl', '--out', 'run'], { cwd: dir })).code).toBe(0);
    const r = await runCli(['show', 'run', '--test-id', '001', '--test-id', '003', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain('"001"');
    expect(r.stdout).not.toContain('"002"');
  });
});

describe('usage errors exit 2 with the usage line', () => {
  it('an unknown option, a missing argument, an unknown command, a group without its action', async () => {
    const dir = await makeTempDir();
    await resultsFile(dir);
    const unknown = await runCli(['export', 'x.jsonl', '--bogus'], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option '--bogus'/);
    expect(unknown.stderr).toMatch(/usage: agentv-results export \[options\] <source>/);
    const missing = await runCli(['compare'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument 'baseline'/);
    expect((await runCli(['frobnicate'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['wip'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['drivers', 'reinstall'], { cwd: dir })).code).toBe(2);
  });

  it('tag RUN --no-psuh exits 2 and pushes nothing; tag RUN -old +new still edits', async () => {
    const user = await makeUserRepo();
    const ws = await makeRunWorkspace({ rows: 2 });
    const pub = await cli(['publish', ws.dir, '--push'], user.work);
    expect(pub.code, pub.stderr).toBe(0);
    const before = await git(user.remote, ['rev-parse', RESULTS_REF]);
    const typo = await cli(['tag', ws.runId, '+x', '--no-psuh'], user.work);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option --no-psuh/);
    expect(typo.stderr).toMatch(/^usage: agentv-results tag \[options\] <run_id> \[edits\.\.\.\]$/m);
    expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(before);
    const edit = await cli(['tag', ws.runId, '+baseline', '-old', '--json'], user.work);
    expect(edit.code, edit.stderr).toBe(0);
    expect((JSON.parse(edit.stdout) as { document: { tags: string[] } }).document.tags).toEqual(['baseline']);
  });
});

describe('subcommands', () => {
  it('wip, drivers and autoresearch actions have their own help', async () => {
    for (const cmd of [
      ['wip', 'recover'],
      ['drivers', 'install'],
      ['autoresearch', 'record'],
    ]) {
      const r = await runCli([...cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: agentv-results ${cmd.join(' ')}`);
    }
  });
});

describe('help <command>', () => {
  it('prints exactly what <command> --help prints, for commands and subcommands', async () => {
    for (const cmd of [['publish'], ['list'], ['wip', 'recover'], ['wip']]) {
      const viaHelp = await runCli(['help', ...cmd]);
      const viaFlag = await runCli([...cmd, '--help']);
      expect(viaHelp.code, cmd.join(' ')).toBe(0);
      expect(viaHelp.stdout).toContain(`Usage: agentv-results ${cmd.join(' ')} [options]`);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      // One wording for the help option everywhere (commander's default was "display help for command").
      expect(viaHelp.stdout).toMatch(/^ {2}-h, --help +Show help$/m);
    }
    const overview = await runCli(['help']);
    expect(overview.code).toBe(0);
    expect(overview.stdout).toBe((await runCli(['--help'])).stdout);
    expect(overview.stdout).toMatch(/^ {2}help \[command\.\.\.\] /m);
  });

  it('an unknown name is an unknown command (exit 2); words after a command are never run', async () => {
    const typo = await runCli(['help', 'publsh']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown command 'publsh'[\s\S]*Did you mean publish\?/);
    expect((await runCli(['help', 'wip', 'nosuch'])).code).toBe(2);
    // `help publish <run> --push` shows publish's help: it does not publish.
    const user = await makeUserRepo();
    const run = await makeRunWorkspace();
    const r = await runCli(['help', 'publish', run.dir, '--push'], { cwd: user.work });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: agentv-results publish');
    await expect(git(user.work, ['rev-parse', '--verify', '-q', RESULTS_REF])).rejects.toThrow();
  });
});
