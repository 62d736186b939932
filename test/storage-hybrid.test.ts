/**
 * `storage_mode: hybrid` against a real S3 API server on 127.0.0.1 (test/helpers/s3.ts: s3rver
 * behind a SigV4-verifying front) with the AWS SDK as our client: publish puts payloads in the
 * bucket before it commits pointers, pull --with-artifacts reads and verifies them, and every
 * failure (wrong credentials, missing bucket, a server gone mid-upload, a corrupted object) leaves
 * no pointer naming a missing object and no secret in what we print.
 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lsTree, openRepo, readBlobs } from '../src/git/index.js';
import { runLocation } from '../src/layout/branch-layout.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { objectStoreYaml, S3_SECRET, startS3, type S3Server } from './helpers/s3.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, makeRunWorkspace, makeUserRepo, readTree, tip, type RunWorkspace } from './publish-helpers.js';
import type { UserRepoFixture } from './helpers/git-fixtures.js';

let restore: () => void;
let s3: S3Server;
let user: UserRepoFixture;
let run: RunWorkspace;

function writeConfig(dir: string, s: S3Server, extra = ''): void {
  mkdirSync(join(dir, '.agentv'), { recursive: true });
  writeFileSync(join(dir, '.agentv', 'config.yaml'), `results:\n${objectStoreYaml(s)}\n${extra}`);
}

function client(s: S3Server, secret = S3_SECRET): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s.env.AWS_ACCESS_KEY_ID!, secretAccessKey: secret },
  });
}

function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

interface Pointer {
  ref: string;
  key: string;
  path: string;
  sha256: string;
  size: number;
  object_version: string;
  media_type: string;
}

async function publishedPointers(dir: string, runId: string): Promise<Pointer[]> {
  const repo = await openRepo(dir);
  const specs = ['.internal/index.jsonl', 'index.jsonl'].map((m) => `${RESULTS_REF}:${runLocation(runId).path}/${m}`);
  const blobs = await readBlobs(repo, specs);
  const index = (blobs.get(specs[0]!) ?? blobs.get(specs[1]!))!;
  return index
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => Object.values((JSON.parse(l) as { artifact_pointers?: Record<string, Pointer> }).artifact_pointers ?? {}));
}

/** The run's paths on the artifacts branch (hybrid: none of its payloads). */
async function artifactPaths(dir: string, runId: string): Promise<string[]> {
  const repo = await openRepo(dir);
  const t = await tip(dir, ARTIFACTS_REF);
  if (!t) return [];
  const prefix = `${runLocation(runId).path}/`;
  return (await lsTree(repo, t, { recursive: true })).map((e) => e.path).filter((p) => p.startsWith(prefix));
}

function files(dir: string): string[] {
  const out: string[] = [];
  const go = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) go(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)));
    }
  };
  go(dir);
  return out;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  s3 = await startS3();
  user = await makeUserRepo();
  writeConfig(user.work, s3);
  run = await makeRunWorkspace({ rows: 4, experiment: 'hybrid' });
}, 60_000);

afterAll(async () => {
  await s3?.close();
  restore();
  await cleanupTempDirs();
});

describe('hybrid: publish and pull through the bucket', () => {
  it('publish stores payloads in the bucket and commits only pointers to them, in AgentV’s pointer shape', async () => {
    const r = await cli(['publish', run.dir, '--push', '--json'], user.work, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(S3_SECRET);
    const out = JSON.parse(r.stdout) as { stored: { objects: number; uploaded: number } };
    expect(out.stored.objects).toBeGreaterThan(0);
    expect(out.stored.uploaded).toBe(out.stored.objects);

    const pointers = await publishedPointers(user.work, run.runId);
    expect(pointers.length).toBeGreaterThan(0);
    const c = client(s3);
    for (const p of pointers) {
      expect(p.ref).toBe('object_store');
      expect(p.key).toBe(`agentv/sha256/${p.sha256}`);
      expect(p.object_version).toBe(`sha256:${p.sha256}`);
      const local = readFileSync(join(run.dir, p.path));
      expect(sha(local)).toBe(p.sha256);
      expect(p.size).toBe(local.length);
      const got = Buffer.from(await (await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: p.key }))).Body!.transformToByteArray());
      expect(got.equals(local)).toBe(true);
    }
    // None of the run's payloads went to git.
    expect(await artifactPaths(user.work, run.runId)).toEqual([]);
  });

  it('publishing again sends nothing (content addressing) and makes no commit', async () => {
    const before = await tip(user.work, RESULTS_REF);
    const seen = s3.requests.length;
    const r = await cli(['publish', run.dir, '--json'], user.work, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
    const sent = s3.requests.slice(seen);
    expect(sent.filter((q) => q.method === 'PUT')).toEqual([]);
    expect(sent.filter((q) => q.method === 'HEAD').length).toBeGreaterThan(0);
  });

  it('pull --with-artifacts on another clone reads every payload from the bucket, verified, byte for byte', async () => {
    const other = await makeTempDir('agentv-hybrid-clone');
    await git(other, ['clone', '-q', user.remote, 'c']);
    const clone = join(other, 'c');
    writeConfig(clone, s3);
    const out = join(other, 'pulled');
    const r = await cli(['pull', run.runId, '--with-artifacts', '--fetch', '--out', out, '--json'], clone, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { payloads: { pointed: number; written: number } };
    expect(res.payloads.written).toBe(res.payloads.pointed);
    const published = await readTree(run.dir);
    const pulled = await readTree(out);
    for (const [path, bytes] of published) {
      if (path.endsWith('index.jsonl')) continue;
      expect(pulled.get(path)?.equals(bytes), path).toBe(true);
    }
  });

  it('a corrupted object is refused on read (sha256 mismatch, exit 1) and nothing is written', async () => {
    const p = (await publishedPointers(user.work, run.runId))[0]!;
    const c = client(s3);
    const good = Buffer.from(await (await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: p.key }))).Body!.transformToByteArray());
    const bad = Buffer.from(good);
    bad[0] = bad[0]! ^ 0xff;
    await c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: p.key, Body: bad }));
    try {
      const out = join(await makeTempDir('agentv-hybrid-corrupt'), 'run');
      const r = await cli(['pull', run.runId, '--with-artifacts', '--out', out], user.work, { env: s3.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('does not match its pointer');
      expect(() => readdirSync(out)).toThrow();
    } finally {
      await c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: p.key, Body: good }));
    }
  });
});

describe('hybrid: failures leave no pointer to a missing object', () => {
  it('wrong credentials: exit 3, nothing committed, the secret never printed', async () => {
    const r0 = await makeRunWorkspace({ rows: 2, experiment: 'hybrid', minute: 7 });
    const before = await tip(user.work, RESULTS_REF);
    const wrong = 'not-the-secret-0000000000000000';
    const r = await cli(['publish', r0.dir, '--json'], user.work, { env: { ...s3.env, AWS_SECRET_ACCESS_KEY: wrong } });
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toContain('refused the credentials');
    expect(r.stdout + r.stderr).not.toContain(wrong);
    expect(r.stdout + r.stderr).not.toContain(S3_SECRET);
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
    // The front refuses a wrong secret as S3 does (s3rver alone would not).
    await expect(client(s3, wrong).send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
  });

  it('a bucket that does not exist: exit 3 saying so, nothing committed', async () => {
    const dir = await makeTempDir('agentv-hybrid-nobucket');
    await git(dir, ['clone', '-q', user.remote, 'c']);
    const clone = join(dir, 'c');
    writeConfig(clone, { ...s3, bucket: 'no-such-bucket' });
    const before = await tip(clone, RESULTS_REF);
    const r0 = await makeRunWorkspace({ rows: 2, experiment: 'hybrid', minute: 8 });
    const r = await cli(['publish', r0.dir], clone, { env: s3.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('bucket no-such-bucket does not exist');
    // Nothing committed: the results branch is where it was, or (a fresh clone deciding from the
    // team's tip) fast-forwarded to the remote's, never a commit of this run.
    const after = await tip(clone, RESULTS_REF);
    expect([before, await tip(clone, `refs/remotes/origin/${RESULTS_REF.replace('refs/heads/', '')}`)]).toContain(after);
  });

  it('the server goes away mid multipart upload: exit 3, nothing committed; once it is back, publish completes and pull verifies', async () => {
    const big = await makeRunWorkspace({ rows: 2, experiment: 'hybrid', minute: 9 });
    const transcript = files(big.dir).find((f) => f.endsWith('transcript.json'))!;
    // 20 MiB of transcript-like text: three parts of a multipart upload.
    const line = `${JSON.stringify({ role: 'assistant', content: 'x'.repeat(200) })}\n`;
    const payload = Buffer.from(line.repeat(Math.ceil((20 * 1024 * 1024) / line.length)));
    const bigPath = join(big.dir, transcript.replace(/transcript\.json$/, 'transcript-raw.log'));
    writeFileSync(bigPath, payload);
    const before = await tip(user.work, RESULTS_REF);
    s3.goAway((req) => req.method === 'PUT' && /partNumber=2/.test(req.url ?? ''));
    try {
      // A short retry budget: the server stays away (test/storage-blip.test.ts rides out a blip).
      const r = await cli(['publish', big.dir], user.work, { env: { ...s3.env, AGENTV_RESULTS_S3_RETRY_SECONDS: '1' } });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('could not be reached');
      expect(await tip(user.work, RESULTS_REF)).toBe(before);
    } finally {
      await s3.comeBack();
    }
    const r2 = await cli(['publish', big.dir, '--json'], user.work, { env: s3.env });
    expect(r2.code, r2.stderr).toBe(0);
    const parts = s3.requests.filter((q) => q.method === 'PUT' && /partNumber=3/.test(q.path));
    expect(parts.length).toBeGreaterThan(0);
    const p = (await publishedPointers(user.work, big.runId)).find((x) => x.path.endsWith('transcript-raw.log'))!;
    expect(p.size).toBe(payload.length);
    const out = join(await makeTempDir('agentv-hybrid-big'), 'run');
    const r3 = await cli(['pull', big.runId, '--with-artifacts', '--out', out], user.work, { env: s3.env });
    expect(r3.code, r3.stderr).toBe(0);
    expect(readFileSync(join(out, p.path)).equals(payload)).toBe(true);
  }, 120_000);
});

describe('hybrid: the daemon publishes through the outbox', () => {
  it('an upload that cannot finish leaves the run pending (never dead), nothing committed; once the bucket is back the run is published', async () => {
    const { OutboxWorker } = await import('../src/daemon/outbox-worker.js');
    const { Outbox } = await import('../src/daemon/outbox.js');
    const { silentLogger } = await import('../src/daemon/log.js');
    const { resolveTarget } = await import('../src/repo/target.js');
    const r0 = await makeRunWorkspace({ rows: 2, experiment: 'hybrid-daemon', minute: 20 });
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, retry: process.env.AGENTV_RESULTS_S3_RETRY_SECONDS };
    // No retry budget: each round gives up at once, and the outbox keeps the run pending.
    Object.assign(process.env, s3.env, { AGENTV_RESULTS_S3_RETRY_SECONDS: '0' });
    try {
      const target = await resolveTarget({ cwd: user.work });
      const outbox = new Outbox(join(await makeTempDir('agentv-outbox'), 'outbox.jsonl'));
      const worker = new OutboxWorker({
        target,
        targetOptions: { cwd: user.work },
        outbox,
        logger: silentLogger,
        push: false,
        maxPublishAttempts: 2,
        backoff: { baseMs: 1, capMs: 2 },
      });
      await outbox.put({ kind: 'publish', run_dir: r0.dir, run_id: r0.runId, wip_ref: null });
      const before = await tip(user.work, RESULTS_REF);
      s3.goAway();
      try {
        for (let i = 0; i < 4; i++) expect((await worker.round({ force: true })).published).toBe(0);
        const pending = await outbox.pending();
        expect(pending.map((p) => [p.job.kind, p.state])).toEqual([['publish', 'pending']]);
        expect(pending[0]!.lastError).toContain('could not be reached');
        expect(await tip(user.work, RESULTS_REF)).toBe(before);
      } finally {
        await s3.comeBack();
      }
      expect((await worker.round({ force: true })).published).toBe(1);
      expect(await outbox.pending()).toEqual([]);
      const pointers = await publishedPointers(user.work, r0.runId);
      expect(pointers.length).toBeGreaterThan(0);
      for (const p of pointers) expect(p.ref).toBe('object_store');
    } finally {
      for (const [k, v] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
        ['AGENTV_RESULTS_S3_RETRY_SECONDS', saved.retry],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  }, 120_000);
});

describe('hybrid: storage migrate', () => {
  it('copies git-native payloads to the bucket and rewrites pointers in one ordinary commit; the artifacts branch keeps them, a second run moves nothing', async () => {
    const repo = await makeUserRepo();
    const old = await makeRunWorkspace({ rows: 3, experiment: 'legacy', minute: 30 });
    const p0 = await cli(['publish', old.dir, '--push'], repo.work);
    expect(p0.code, p0.stderr).toBe(0);
    const gitPointers = await publishedPointers(repo.work, old.runId);
    expect(gitPointers.every((p) => p.ref === 'agentv/artifacts/v1')).toBe(true);
    const artifactsBefore = await tip(repo.work, ARTIFACTS_REF);
    const resultsBefore = await tip(repo.work, RESULTS_REF);

    writeConfig(repo.work, s3, '  auto_push: true\n');
    const dry = await cli(['storage', 'migrate', '--dry-run', '--json'], repo.work, { env: s3.env });
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { payloads: number; commit: null }).payloads).toBe(gitPointers.length);
    expect(await tip(repo.work, RESULTS_REF)).toBe(resultsBefore);

    const r = await cli(['storage', 'migrate', '--json'], repo.work, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(S3_SECRET);
    const res = JSON.parse(r.stdout) as { payloads: number; uploaded: number; commit: string; push: { landed: boolean } };
    expect(res.payloads).toBe(gitPointers.length);
    expect(res.push.landed).toBe(true);
    // An ordinary commit on top of the old tip; the artifacts branch untouched.
    expect((await git(repo.work, ['rev-parse', `${res.commit}^`])).trim()).toBe(resultsBefore);
    expect(await tip(repo.work, ARTIFACTS_REF)).toBe(artifactsBefore);
    const moved = await publishedPointers(repo.work, old.runId);
    expect(moved.map((p) => [p.path, p.sha256, p.size])).toEqual(gitPointers.map((p) => [p.path, p.sha256, p.size]));
    for (const p of moved) {
      expect(p.ref).toBe('object_store');
      expect(p.key).toBe(`agentv/sha256/${p.sha256}`);
    }
    // Old pointers (the commit before) still resolve on the artifacts branch.
    const oldKeys = gitPointers.map((p) => `${artifactsBefore}:${p.key}`);
    const blobs = await readBlobs(await openRepo(repo.work), oldKeys);
    expect(oldKeys.every((k) => blobs.get(k) !== null && blobs.get(k) !== undefined)).toBe(true);

    // Pulled from the bucket, byte for byte.
    const out = join(await makeTempDir('agentv-migrated'), 'run');
    const pr = await cli(['pull', old.runId, '--with-artifacts', '--out', out], repo.work, { env: s3.env });
    expect(pr.code, pr.stderr).toBe(0);
    for (const p of moved) expect(readFileSync(join(out, p.path)).equals(readFileSync(join(old.dir, p.path)))).toBe(true);

    const again = await cli(['storage', 'migrate', '--json'], repo.work, { env: s3.env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ payloads: 0, commit: null });
    expect(await tip(repo.work, RESULTS_REF)).toBe(res.commit);
  }, 120_000);
});

describe('hybrid: round trips and hostile input', () => {
  it('a pulled hybrid run validates, and republishing it (with or without its payloads) makes no commit', async () => {
    const dir = await makeTempDir('agentv-hybrid-roundtrip');
    const before = await tip(user.work, RESULTS_REF);
    const full = join(dir, 'full');
    expect((await cli(['pull', run.runId, '--with-artifacts', '--out', full], user.work, { env: s3.env })).code).toBe(0);
    const v = await cli(['validate', full, '--require-payloads'], user.work);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const bare = join(dir, 'bare');
    expect((await cli(['pull', run.runId, '--out', bare], user.work, { env: s3.env })).code).toBe(0);
    for (const ws of [full, bare]) {
      const r = await cli(['publish', ws, '--json'], user.work, { env: s3.env });
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { status: string }).status).toBe('already-published');
    }
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
  });

  it('an object_store pointer key must be the content address of its own sha256 under a safe prefix (pull and validate check it)', async () => {
    const { isContentKey } = await import('../src/store/object-store.js');
    const h = 'a'.repeat(64);
    expect(isContentKey(`agentv/sha256/${h}`, h)).toBe(true);
    expect(isContentKey(`sha256/${h}`, h)).toBe(true);
    for (const bad of [`agentv/sha256/${'b'.repeat(64)}`, `../sha256/${h}`, `a/../sha256/${h}`, `/sha256/${h}`, `a b/sha256/${h}`])
      expect(isContentKey(bad, h), bad).toBe(false);
  });
});

describe('hybrid: configuration', () => {
  it('refuses a literal secret in the file without repeating it, and hybrid without object_store', async () => {
    const { loadResultsConfig } = await import('../src/repo/config.js');
    const dir = await makeTempDir('agentv-hybrid-config');
    mkdirSync(join(dir, '.agentv'));
    const secret = 'literal-secret-in-file-123';
    writeFileSync(
      join(dir, '.agentv', 'config.yaml'),
      `results:\n  storage_mode: hybrid\n  object_store:\n    bucket: b-1\n    credentials:\n      secret_access_key: ${secret}\n`,
    );
    const err = await loadResultsConfig({ cwd: dir, env: {} }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'config' });
    expect((err as Error).message).toContain('never read from the config file');
    expect((err as Error).message).not.toContain(secret);
    writeFileSync(join(dir, '.agentv', 'config.yaml'), 'results:\n  storage_mode: hybrid\n');
    await expect(loadResultsConfig({ cwd: dir, env: {} })).rejects.toThrow(/object_store is not set/);
    // The environment fills object_store key by key; git-native stays the default.
    writeFileSync(join(dir, '.agentv', 'config.yaml'), 'results:\n  object_store:\n    bucket: from-file\n    prefix: p\n');
    const c = await loadResultsConfig({ cwd: dir, env: { AGENTV_RESULTS_S3_BUCKET: 'from-env', AGENTV_RESULTS_STORAGE_MODE: 'hybrid' } });
    expect(c.config.storage_mode).toBe('hybrid');
    expect(c.config.object_store).toMatchObject({ bucket: 'from-env', prefix: 'p', region: 'us-east-1', force_path_style: false });
    expect((await loadResultsConfig({ cwd: await makeTempDir('agentv-empty'), env: {} })).config.storage_mode).toBe('git-native');
  });
});

describe('hybrid: an AgentV 5.x workspace with a transcript pointer', () => {
  it('its pointed transcript goes to the bucket; pull --with-artifacts gives back the workspace byte for byte (originals restored)', async () => {
    const RUN = '2026-11-21T10-00-00-000Z';
    const root = await makeTempDir('agentv-v5-hybrid');
    const dir = join(root, '.agentv', 'results', RUN);
    const rd = 'alpha--000000000000';
    const transcript = JSON.stringify(
      { schema_version: 'agentv.normalized_transcript.v1', messages: [{ role: 'assistant', content: 'hybrid answer' }] },
      null,
      2,
    );
    const row = {
      timestamp: '2026-11-21T10:00:01.000Z',
      test_id: 'alpha',
      suite: 'demo',
      score: 1,
      target: 'steady-agent',
      execution_status: 'ok',
      result_dir: rd,
      summary_path: `${rd}/summary.json`,
      transcript_path: `${rd}/sample-1/transcript.json`,
      artifact_pointers: {
        transcript: {
          ref: 'agentv/artifacts/v1',
          key: `local/${rd}/sample-1/transcript.json`,
          object_version: `sha256:${sha(Buffer.from(transcript))}`,
          path: `${rd}/sample-1/transcript.json`,
          sha256: sha(Buffer.from(transcript)),
          size: Buffer.byteLength(transcript),
          schema_version: 'agentv.normalized_transcript.v1',
          media_type: 'application/vnd.agentv.normalized-transcript.v1+json',
          family: 'transcripts',
        },
      },
    };
    const ws: Record<string, string> = {
      [`${rd}/sample-1/transcript.json`]: transcript,
      [`${rd}/summary.json`]: JSON.stringify({ test_id: 'alpha' }),
      '.internal/index.jsonl': `${JSON.stringify(row)}\n`,
      'summary.json': JSON.stringify({
        index_path: '.internal/index.jsonl',
        run_id: RUN,
        metadata: { experiment: 'demo', timestamp: row.timestamp, targets: ['steady-agent'] },
      }),
    };
    for (const [rel, data] of Object.entries(ws)) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), data);
    }
    const r = await cli(['publish', dir, '--json'], user.work, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { stored: { objects: number } }).stored.objects).toBe(1);
    const onBranch = await publishedPointers(user.work, RUN);
    expect(onBranch.map((p) => [p.ref, p.key])).toEqual([['object_store', `agentv/sha256/${sha(Buffer.from(transcript))}`]]);
    expect((await artifactPaths(user.work, RUN)).some((p) => p.endsWith('transcript.json'))).toBe(false);
    const out = join(root, 'pulled');
    const pr = await cli(['pull', RUN, '--with-artifacts', '--out', out], user.work, { env: s3.env });
    expect(pr.code, pr.stderr).toBe(0);
    for (const [rel, data] of Object.entries(ws)) expect(readFileSync(join(out, rel), 'utf8'), rel).toBe(data);
  });
});

describe('hybrid: WIP checkpoints', () => {
  it('a checkpoint stores heavy files in the bucket and commits their pointers; recover rebuilds them, verified', async () => {
    const ws = await makeRunWorkspace({ rows: 2, experiment: 'hybrid-wip', minute: 40 });
    const transcript = files(ws.dir).find((f) => f.endsWith('transcript.json'))!;
    const heavyRel = transcript.replace(/transcript\.json$/, 'transcript-raw.log');
    const heavy = Buffer.from('raw log line\n'.repeat(40_000)); // ~520 KB, over the 256 KiB threshold
    writeFileSync(join(ws.dir, heavyRel), heavy);
    const r = await cli(['wip', 'checkpoint', ws.dir, '--full', '--no-push', '--json'], user.work, { env: s3.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(S3_SECRET);
    const branch = (JSON.parse(r.stdout) as { result: { branch: string } }[])[0]!.result.branch;
    const tree = (await git(user.work, ['ls-tree', '-r', '--name-only', `refs/heads/${branch}`])).split('\n');
    expect(tree).toContain(`objects/${heavyRel}`);
    expect(tree).not.toContain(`run/${heavyRel}`);
    const pointer = JSON.parse(await git(user.work, ['show', `refs/heads/${branch}:objects/${heavyRel}`])) as { key: string; sha256: string; size: number };
    expect(pointer).toMatchObject({ key: `agentv/sha256/${sha(heavy)}`, sha256: sha(heavy), size: heavy.length });
    const got = Buffer.from(await (await client(s3).send(new GetObjectCommand({ Bucket: s3.bucket, Key: pointer.key }))).Body!.transformToByteArray());
    expect(got.equals(heavy)).toBe(true);

    const out = join(await makeTempDir('agentv-hybrid-recover'), 'run');
    const rec = await cli(['wip', 'recover', branch, '--out', out, '--no-fetch'], user.work, { env: s3.env });
    expect(rec.code, rec.stderr).toBe(0);
    expect(readFileSync(join(out, heavyRel)).equals(heavy)).toBe(true);
    // Without the bucket's configuration, recover refuses rather than leaving the file out.
    const plain = await makeTempDir('agentv-hybrid-recover-plain');
    await git(plain, ['clone', '-q', user.work, 'c']);
    await git(join(plain, 'c'), ['fetch', '-q', user.work, `refs/heads/${branch}:refs/heads/${branch}`]);
    const bad = await cli(['wip', 'recover', branch, '--out', join(plain, 'out'), '--no-fetch'], join(plain, 'c'), { env: s3.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('object_store is not configured');
  });
});
