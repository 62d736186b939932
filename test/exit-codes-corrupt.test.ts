/**
 * One exit code per failure kind (issue 40, item 7): an object in the bucket that does not match
 * its pointer is the same failure whoever reads it — `pull` and `wip recover` both exit 1
 * (`read-check`) and write nothing. Against a real S3 API server on 127.0.0.1 (test/helpers/s3.ts).
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { objectStoreYaml, S3_SECRET, startS3, type S3Server } from './helpers/s3.js';
import { cli, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

let restore: () => void;
let s3: S3Server;
let user: UserRepoFixture;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  s3 = await startS3();
  user = await makeUserRepo();
  mkdirSync(join(user.work, '.agentv'), { recursive: true });
  writeFileSync(join(user.work, '.agentv', 'config.yaml'), `results:\n${objectStoreYaml(s3)}\n`);
});

afterAll(async () => {
  await s3?.close();
  restore?.();
  await cleanupTempDirs();
});

/** Flip the first byte of the object at `key`; returns a function that puts it back. */
async function corrupt(key: string): Promise<() => Promise<void>> {
  const c = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.env.AWS_ACCESS_KEY_ID!, secretAccessKey: S3_SECRET },
  });
  const good = Buffer.from(await (await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }))).Body!.transformToByteArray());
  const bad = Buffer.from(good);
  bad[0] = bad[0]! ^ 0xff;
  await c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bad }));
  return async () => {
    await c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: good }));
  };
}

describe('a corrupted object: one failure, one exit code', () => {
  it('wip recover exits 1 (read-check) as pull does, and writes nothing', async () => {
    const ws = await makeRunWorkspace({ rows: 2, experiment: 'corrupt-wip', minute: 41 });
    const transcript = (readdirSync(ws.dir, { recursive: true, encoding: 'utf8' }) as string[]).find((f) => f.endsWith('transcript.json'))!;
    const heavyRel = transcript.replace(/transcript\.json$/, 'transcript-raw.log');
    writeFileSync(join(ws.dir, heavyRel), Buffer.from('raw log line\n'.repeat(40_000))); // over the 256 KiB threshold
    const cp = await cli(['wip', 'checkpoint', ws.dir, '--full', '--no-push', '--json'], user.work, { env: s3.env });
    expect(cp.code, cp.stderr).toBe(0);
    const branch = (JSON.parse(cp.stdout) as { result: { branch: string } }[])[0]!.result.branch;
    const pointer = JSON.parse(await git(user.work, ['show', `refs/heads/${branch}:objects/${heavyRel}`])) as { key: string };
    const putBack = await corrupt(pointer.key);
    try {
      const out = join(await makeTempDir('agentv-corrupt-recover'), 'run');
      const r = await cli(['wip', 'recover', branch, '--out', out, '--no-fetch'], user.work, { env: s3.env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('does not match its pointer');
      expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
    } finally {
      await putBack();
    }
  });
});
