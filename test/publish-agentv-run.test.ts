/**
 * An AgentV 5.x workspace whose manifest carries transcript pointers: published by AgentV's rules
 * (the pointed transcripts go to the artifacts branch at `<run_id>/<path>`, deprecated `trace.json`
 * files stay off the results branch, every index.jsonl is rewritten with the published key and the
 * transcript pointer alone), and `pull --with-artifacts` still gives back the workspace byte for
 * byte from the originals kept under `<run_id>/.agentv-results/` on the artifacts branch.
 * (`agentv eval` writes no pointers today; the differential test in test/conformance covers the
 * runs it writes, with AgentV's own publish as the oracle.)
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import type { UserRepoFixture } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, expectUntouched, makeUserRepo } from './publish-helpers.js';

const RUN = '2026-11-20T10-00-00-000Z';
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** A small AgentV 5.x workspace: two tests, the first with a transcript pointer (a local key), one deprecated trace.json, an executable helper. */
async function agentvWorkspace(root: string, opts: { badChecksum?: boolean } = {}): Promise<string> {
  const dir = join(root, '.agentv', 'results', RUN);
  const files: Record<string, string> = {};
  const rows: Record<string, unknown>[] = [];
  for (const [i, test] of ['alpha', 'beta'].entries()) {
    const rd = `${test}--00000000000${i}`;
    const transcript = JSON.stringify(
      { schema_version: 'agentv.normalized_transcript.v1', messages: [{ role: 'assistant', content: `answer ${test}` }] },
      null,
      2,
    );
    files[`${rd}/sample-1/transcript.json`] = transcript;
    files[`${rd}/sample-1/outputs/answer.md`] = `answer ${test}\n`;
    files[`${rd}/sample-1/grading.json`] = JSON.stringify({
      pass: i === 0,
      score: i === 0 ? 1 : 0,
      reason: i === 0 ? 'contains x' : 'no x',
      component_results: [{ pass: i === 0, score: i === 0 ? 1 : 0, reason: 'contains-x', assertion: { name: 'contains-x', type: 'contains', weight: 1 } }],
    });
    files[`${rd}/summary.json`] = JSON.stringify({ test_id: test });
    const row: Record<string, unknown> = {
      timestamp: '2026-11-20T10:00:01.000Z',
      test_id: test,
      suite: 'demo',
      category: 'demo',
      score: i === 0 ? 1 : 0,
      target: 'steady-agent',
      scores: [{ name: 'contains-x', type: 'contains', pass: i === 0, score: i === 0 ? 1 : 0, weight: 1 }],
      execution_status: 'ok',
      result_dir: rd,
      summary_path: `${rd}/summary.json`,
      grading_path: `${rd}/sample-1/grading.json`,
      answer_path: `${rd}/sample-1/outputs/answer.md`,
      transcript_path: `${rd}/sample-1/transcript.json`,
    };
    if (i === 0) {
      row.artifact_pointers = {
        transcript: {
          ref: 'agentv/artifacts/v1',
          key: `local/${rd}/sample-1/transcript.json`,
          object_version: `sha256:${sha256(transcript)}`,
          path: `${rd}/sample-1/transcript.json`,
          sha256: opts.badChecksum ? sha256('other') : sha256(transcript),
          size: Buffer.byteLength(transcript),
          schema_version: 'agentv.normalized_transcript.v1',
          media_type: 'application/vnd.agentv.normalized-transcript.v1+json',
          family: 'transcripts',
        },
        raw: { ref: 'agentv/artifacts/v1', path: `${rd}/sample-1/outputs/answer.md` },
      };
    }
    rows.push(row);
  }
  files[`${'alpha--000000000000'}/sample-1/trace.json`] = '{"spans":[]}';
  files['.internal/index.jsonl'] = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  files['summary.json'] = JSON.stringify(
    { index_path: '.internal/index.jsonl', run_id: RUN, metadata: { experiment: 'demo', timestamp: '2026-11-20T10:00:01.000Z', targets: ['steady-agent'] } },
    null,
    2,
  );
  files['tools/run.sh'] = '#!/bin/sh\necho hi\n';
  for (const [rel, data] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), data);
  }
  await chmod(join(dir, 'tools/run.sh'), 0o755);
  return dir;
}

async function snapshot(dir: string, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, await snapshot(dir, child));
    else out[child] = `${(await stat(join(dir, child))).mode & 0o111 ? 'x' : '-'}:${sha256(await readFile(join(dir, child)))}`;
  }
  return out;
}

let restoreEnv: () => void;
let user: UserRepoFixture;
let run: string;

beforeAll(async () => {
  restoreEnv = useIsolatedGitEnv();
  user = await makeUserRepo();
  run = await agentvWorkspace(await makeTempDir('agentv-v5'));
  const r = await expectUntouched(user.work, () => cli(['publish', run, '--json'], user.work));
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => {
  restoreEnv();
  await cleanupTempDirs();
});

describe("an AgentV 5.x workspace with transcript pointers, published by AgentV's rules", () => {
  it('keeps every other file byte for byte and with its mode, and moves the pointed transcript and nothing else', async () => {
    const tree = (await git(user.work, ['ls-tree', '-r', RESULTS_REF, '--', `${RUN}/`])).split('\n');
    const paths = tree.map((l) => l.slice(l.indexOf('\t') + 1 + RUN.length + 1));
    expect(paths).not.toContain('alpha--000000000000/sample-1/transcript.json');
    expect(paths).not.toContain('alpha--000000000000/sample-1/trace.json');
    // Only the transcript pointer moves a payload; beta has no pointer, so its transcript stays.
    expect(paths).toContain('beta--000000000001/sample-1/transcript.json');
    expect(paths).toContain('alpha--000000000000/sample-1/outputs/answer.md');
    expect(tree.find((l) => l.endsWith('/tools/run.sh'))).toMatch(/^100755 /);
    for (const rel of ['summary.json', 'alpha--000000000000/sample-1/grading.json', 'beta--000000000001/sample-1/transcript.json']) {
      expect(await git(user.work, ['show', `${RESULTS_REF}:${RUN}/${rel}`])).toBe((await readFile(join(run, rel), 'utf8')).replace(/\n$/, ''));
    }
    // AgentV's artifacts layout: the payload at <run_id>/<path>; our originals apart under .agentv-results/.
    const art = (await git(user.work, ['ls-tree', '-r', '--name-only', ARTIFACTS_REF, '--', `${RUN}/`])).split('\n');
    expect(art).toEqual(
      [
        `${RUN}/.agentv-results/restore.json`,
        `${RUN}/.agentv-results/restore/.internal/index.jsonl`,
        `${RUN}/.agentv-results/restore/alpha--000000000000/sample-1/trace.json`,
        `${RUN}/alpha--000000000000/sample-1/transcript.json`,
      ].sort(),
    );
  });

  it('rewrites the manifest as AgentV does: the published key, the transcript pointer alone, other lines untouched', async () => {
    const published = (await git(user.work, ['show', `${RESULTS_REF}:${RUN}/.internal/index.jsonl`])).split('\n');
    const local = (await readFile(join(run, '.internal/index.jsonl'), 'utf8')).split('\n');
    const first = JSON.parse(published[0]!) as { artifact_pointers: Record<string, { key: string; path: string }> };
    expect(Object.keys(first.artifact_pointers)).toEqual(['transcript']);
    expect(first.artifact_pointers.transcript!.key).toBe(`${RUN}/alpha--000000000000/sample-1/transcript.json`);
    expect(published[1]).toBe(local[1]);
    // The key names the payload on the artifacts branch.
    const payload = await git(user.work, ['show', `${ARTIFACTS_REF}:${first.artifact_pointers.transcript!.key}`]);
    expect(payload).toBe(await readFile(join(run, 'alpha--000000000000/sample-1/transcript.json'), 'utf8'));
  });

  it('pull --with-artifacts gives back the workspace byte for byte; without, the run as the branch has it', async () => {
    const out = join(await makeTempDir('agentv-v5-pull'), RUN);
    const r = await cli(['pull', RUN, '--with-artifacts', '--out', out], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect(await snapshot(out)).toEqual(await snapshot(run));
    const plain = join(await makeTempDir('agentv-v5-pull'), RUN);
    expect((await cli(['pull', RUN, '--out', plain], user.work)).code).toBe(0);
    expect(await readFile(join(plain, '.internal/index.jsonl'), 'utf8')).toBe(
      (await git(user.work, ['show', `${RESULTS_REF}:${RUN}/.internal/index.jsonl`])) + '\n',
    );
  });

  it('publishing the same workspace again makes no commit', async () => {
    const before = await git(user.work, ['rev-parse', RESULTS_REF, ARTIFACTS_REF]);
    const r = await cli(['publish', run, '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).status).toBe('already-published');
    expect(await git(user.work, ['rev-parse', RESULTS_REF, ARTIFACTS_REF])).toBe(before);
  });

  it('refuses a pointer whose checksum does not match the file, and a link in the workspace, committing nothing', async () => {
    const before = await git(user.work, ['rev-parse', RESULTS_REF, ARTIFACTS_REF]);
    const bad = await agentvWorkspace(await makeTempDir('agentv-v5-bad'), { badChecksum: true });
    const r1 = await cli(['publish', bad], user.work);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/checksum/);
    const linked = await agentvWorkspace(await makeTempDir('agentv-v5-link'));
    await symlink('/etc/passwd', join(linked, 'alpha--000000000000', 'passwd'));
    const r2 = await cli(['publish', linked], user.work);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/unsafe paths/);
    expect(r2.stderr).toMatch(/passwd/);
    expect(await git(user.work, ['rev-parse', RESULTS_REF, ARTIFACTS_REF])).toBe(before);
  });
});
