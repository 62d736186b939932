/**
 * `agentv-results show … | head -1`: the reader closes the pipe early. The command must end
 * quietly with its own exit code (0), no stack trace, and its work done.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, runCli } from './helpers/cli.js';
import { makeTempDir } from './helpers/git-fixtures.js';

/** Run the CLI with stdout read until the first newline, then closed (what `head -1` does). */
function runIntoHead(args: string[], cwd: string): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (first.includes('\n')) return;
      first += d.toString('utf8');
      if (first.includes('\n')) child.stdout.destroy();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stderr, first: first.split('\n')[0]! }));
  });
}

describe('stdout closed early by the reader', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('agentv-pipe');
    const rows = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ timestamp: '2026-11-20T09:00:00.000Z', test_id: `t${i}`, suite: 's', target: 'x', score: i % 2, execution_status: 'ok' }),
    );
    await writeFile(join(dir, 'r.jsonl'), rows.join('\n') + '\n');
    const r = await runCli(['export', 'r.jsonl', '--out', 'run'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
  });

  it('show | head -1 exits 0 without a stack trace, every time', { timeout: 180_000 }, async () => {
    for (let i = 0; i < 5; i++) {
      const r = await runIntoHead(['show', 'run'], dir);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.first.length).toBeGreaterThan(0);
    }
  });

  it('export --json | head -1 still finishes its work', async () => {
    const r = await runIntoHead(['export', 'r.jsonl', '--out', 'run2', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, 'run2', 'summary.json'))).toBe(true);
  });
});
