/**
 * Endless and oversized inputs (issue 13, hole 5): the line-length and total-size limits hold
 * while the input streams, so `export /dev/zero` (one endless line) fails fast instead of reading
 * for ever, and so does an endless stream of short lines once the total limit is passed.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readJsonlLines } from '../src/runs/export/jsonl-reader.js';
import { cli } from './publish-helpers.js';
import { makeTempDir } from './helpers/git-fixtures.js';

/** A stream that never ends: `unit` repeated. */
function endless(unit: Buffer): Readable {
  return new Readable({
    read() {
      this.push(unit);
    },
  });
}

describe('streaming limits', () => {
  it('export /dev/zero exits 2: a device is refused before it is read (issue 30 item 6)', async () => {
    const cwd = await makeTempDir('agentv-zero');
    // /dev/zero never ends: exit 2 and this message can only come from the up-front refusal (a kill
    // by the harness' timeout would be another code and no such message).
    const r = await cli(['export', '/dev/zero', '--out', `${cwd}/out`], cwd, { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/\/dev\/zero: is a device, not a regular file/);
  });

  it('an endless line is reported as soon as it passes the line limit', async () => {
    const seen: { ok: boolean; problem?: string }[] = [];
    for await (const line of readJsonlLines(endless(Buffer.alloc(64 * 1024, 0x61)), { maxLineBytes: 1024 * 1024 })) {
      seen.push(line.ok ? { ok: true } : { ok: false, problem: line.problem });
      break;
    }
    expect(seen[0]?.ok).toBe(false);
    expect(seen[0]?.problem).toMatch(/over the 1048576-byte limit/);
  });

  it('endless short lines stop at the total-size limit, even when bad lines are skipped', async () => {
    let lines = 0;
    let fatal: string | null = null;
    for await (const line of readJsonlLines(endless(Buffer.from('{"a":1}\n'.repeat(1024))), { maxTotalBytes: 4 * 1024 * 1024 })) {
      if (!line.ok) {
        expect(line.fatal).toBe(true);
        fatal = line.problem;
        break;
      }
      lines++;
    }
    expect(fatal).toMatch(/over the 4194304-byte total limit/);
    expect(lines).toBeGreaterThan(0);
  });
});
