/**
 * Most tests run the CLI inside the test process (helpers/cli-in-process.ts). That is only honest
 * while it answers exactly as the binary does: the same exit code, stdout and stderr for the same
 * command, and no trace of the call left in the test process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from './helpers/cli-in-process.js';
import { spawnCli } from './helpers/cli.js';
import { isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';

isolateGitForSuite();

describe('the in-process CLI answers as the binary does', () => {
  it('same exit code, stdout and stderr: success, --json, help, usage errors, input errors, a missing run', async () => {
    const dir = await makeTempDir('agentv-harness');
    const rows = [0, 1, 2].map((i) =>
      JSON.stringify({ timestamp: '2026-11-20T09:00:00.000Z', test_id: `t${i}`, target: 'x', score: i / 2, execution_status: 'ok' }),
    );
    await writeFile(join(dir, 'r.jsonl'), rows.join('\n') + '\n');
    await writeFile(join(dir, 'bad.jsonl'), '{"test_id": \n');
    const inProcess = await runCliInProcess(['export', 'r.jsonl', '--out', 'run', '--json'], { cwd: dir });
    const binary = await spawnCli(['export', 'r.jsonl', '--out', 'run-b', '--json'], { cwd: dir });
    expect(inProcess.code).toBe(0);
    expect(binary.code).toBe(0);
    const strip = (s: string) => s.replaceAll('run-b', 'run');
    expect(inProcess.stdout.length).toBeGreaterThan(0);
    expect(inProcess.stdout).toBe(strip(binary.stdout));
    const cases = [
      ['summary', 'run'],
      ['summary', 'run', '--json'],
      ['show', 'run', '--test-id', 't1'],
      ['validate', 'run'],
      ['publish', '--help'],
      ['--help'],
      ['--version'],
      ['publsh'],
      ['export', 'r.jsonl', '--no-such-flag'],
      ['export', 'bad.jsonl', '--out', 'x'],
      ['summary', 'no-such-run'],
      ['wip'],
    ];
    const codes = new Set<number>();
    for (const args of cases) {
      const a = await runCliInProcess(args, { cwd: dir });
      const b = await spawnCli(args, { cwd: dir });
      expect({ args, ...a }).toEqual({ args, ...b });
      codes.add(a.code);
    }
    // The cases reach success, usage errors and input errors, so the comparison covers each path.
    expect([...codes].sort()).toEqual([0, 2]);
  });

  it('restores the working directory, the environment and the exit code, and captures nothing after', async () => {
    const dir = await makeTempDir('agentv-harness');
    const cwd = process.cwd();
    const env = { ...process.env };
    const writes = { out: process.stdout.write, err: process.stderr.write };
    process.env.AGENTV_HARNESS_KEEP = 'kept';
    const r = await runCliInProcess(['summary', 'missing'], { cwd: dir, env: { AGENTV_HARNESS_KEEP: undefined, AGENTV_HARNESS_SET: 'x' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agentv-results: /);
    expect(process.cwd()).toBe(cwd);
    expect(process.env.AGENTV_HARNESS_KEEP).toBe('kept');
    expect(process.env.AGENTV_HARNESS_SET).toBeUndefined();
    expect(process.exitCode ?? 0).toBe(0);
    expect(process.stdout.write).toBe(writes.out);
    expect(process.stderr.write).toBe(writes.err);
    delete process.env.AGENTV_HARNESS_KEEP;
    expect(process.env).toEqual(env);
  });

  it('refuses overlapping calls: concurrent commands are for spawnCli', async () => {
    const dir = await makeTempDir('agentv-harness');
    const first = runCliInProcess(['summary', 'missing'], { cwd: dir });
    await expect(runCliInProcess(['summary', 'missing'], { cwd: dir })).rejects.toThrow(/spawnCli/);
    expect((await first).code).toBe(2);
    // And it is usable again once the first call is done.
    expect((await runCliInProcess(['--version'])).code).toBe(0);
  });
});
