/**
 * `storage migrate`: move the payloads of runs already published in `git-native` mode into the
 * object store of `storage_mode: hybrid` — copy, never rewrite:
 *
 *   read every run manifest on the live results branch -> for each pointer to the artifacts branch,
 *   read the payload from it, verify sha256 and size -> store it in the bucket (content-addressed,
 *   idempotent) -> one ordinary commit on the results branch rewriting those pointers -> push
 *
 * The artifacts branch is not touched: its payloads stay where the old pointers (every commit
 * before the migration, every clone not yet fetched) find them, so old and new pointers both work
 * while both exist. Every upload finishes before the commit, so no new pointer names a missing
 * object; a run interrupted halfway is migrated by running the command again (uploads already done
 * are skipped by their content address). Archived runs keep their git-native pointers (they are read
 * as before). A payload this machine does not have is reported, never guessed.
 */
import { readBlobs, readRefs, lsTree, writeCommit, updateRefs, type FileChange } from '../git/index.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { ConfigError } from '../errors/publish-errors.js';
import { objectStoreForReading } from '../repo/storage.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { AGENTV_ARTIFACTS_REF_NAME } from '../publish/agentv-run.js';
import { offloadPayloads, pointersOf } from '../publish/offload.js';
import { OBJECT_STORE_REF, sha256Of } from '../store/object-store.js';
import { syncIdent } from '../sync/integrate.js';
import { pushBranches, type PushOutcome } from '../sync/push-branches.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import { jsonlObjects } from '../util/jsonl-objects.js';
import { flag, fnOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';

/** `migrateStorage`'s own options, checked when it is called (beside the target options every branch verb takes). */
export const MigrateOptionsSchema = z.strictObject({
  ...TargetFields,
  /** List what would move; upload and commit nothing. */
  dryRun: z.boolean().default(false).meta(flag('--dry-run', 'List what would move; upload and commit nothing')),
  /** Push the results branch afterwards (default: results.auto_push). */
  push: z
    .boolean()
    .optional()
    .meta(flag('--push', 'Push the results branch afterwards (default: results.auto_push)', { negate: { flag: '--no-push', help: 'Commit locally only' } })),
  onStep: fnOf<(step: string) => void>().optional(),
  now: z.date().optional(),
});

/** What a caller of `migrateStorage` passes. */
export type MigrateOptions = z.input<typeof MigrateOptionsSchema>;

export interface MigrateResult {
  dryRun: boolean;
  /** Manifests (one per run, more for AgentV runs with per-test manifests) whose pointers moved. */
  manifests: { path: string; payloads: number }[];
  payloads: number;
  uploaded: number;
  bytes: number;
  /** Pointers left as they were, and why (a payload this machine lacks, one that fails its checksum). */
  skipped: { path: string; payload: string; reason: string }[];
  commit: string | null;
  push: PushOutcome | null;
}

interface PointerRef {
  path: string;
  key: string;
  sha256: string;
  size: number | null;
}

/** The pointers of a manifest that name the artifacts branch. */
function gitPointers(text: string, refs: Set<string>): PointerRef[] {
  const out: PointerRef[] = [];
  for (const row of jsonlObjects(text)) {
    for (const q of pointersOf(row)) {
      if (q.ref === OBJECT_STORE_REF || typeof q.ref !== 'string' || !refs.has(q.ref)) continue;
      if (typeof q.key !== 'string' || typeof q.path !== 'string' || typeof q.sha256 !== 'string') continue;
      out.push({ path: q.path, key: q.key, sha256: q.sha256, size: typeof q.size === 'number' ? q.size : null });
    }
  }
  return out;
}

/** Move published runs' heavy files to the configured storage mode (`storage migrate`), committing and pushing once. */
export async function migrateStorage(options: MigrateOptions = {}): Promise<MigrateResult> {
  const opts = parseOptions('migrateStorage', MigrateOptionsSchema, options);
  const target = await resolveTarget(opts);
  const store = objectStoreForReading(target.config);
  if (!store)
    throw new ConfigError(
      'storage migrate: results.object_store is not configured (set storage_mode: hybrid and object_store: endpoint, region, bucket, prefix, force_path_style)',
    );
  let result: MigrateResult;
  try {
    const lock = opts.dryRun ? null : await acquirePublishLock(target.repo.commonDir);
    try {
      result = await migrateWithLock(target, store, opts, () => lock?.assertHeld());
    } finally {
      await lock?.release();
    }
  } finally {
    await store.close();
  }
  // Outside the lock, like a publish's push.
  if (!opts.dryRun && result.commit && target.remote !== null && (opts.push ?? target.config.auto_push)) result.push = await pushBranches(target);
  return result;
}

async function migrateWithLock(
  target: PublishTarget,
  store: NonNullable<ReturnType<typeof objectStoreForReading>>,
  opts: z.output<typeof MigrateOptionsSchema>,
  assertHeld: () => void,
): Promise<MigrateResult> {
  const { repo, resultsRef, artifactsRef, config } = target;
  const result: MigrateResult = { dryRun: opts.dryRun, manifests: [], payloads: 0, uploaded: 0, bytes: 0, skipped: [], commit: null, push: null };
  const tracking = target.remote ? trackingRef(target.remote, artifactsRef) : null;
  const tips = await readRefs(repo, [resultsRef, artifactsRef, ...(tracking ? [tracking] : [])]);
  const resultsTip = tips.get(resultsRef) ?? null;
  if (!resultsTip) return result;
  const artifactTips = [tips.get(artifactsRef), tracking ? tips.get(tracking) : undefined].filter((t): t is string => !!t);
  const refs = new Set([config.artifacts_branch, AGENTV_ARTIFACTS_REF_NAME]);

  // Every run manifest on the live branch (our catalog under .indexes/ is not one).
  const manifests = (await lsTree(repo, resultsTip, { recursive: true })).filter(
    (e) => e.type === 'blob' && (e.path.endsWith('/index.jsonl') || e.path === 'index.jsonl') && !e.path.startsWith('.'),
  );
  const texts = await readBlobs(
    repo,
    manifests.map((m) => m.sha),
  );
  const changes: FileChange[] = [];
  let n = 0;
  for (const m of manifests) {
    const text = texts.get(m.sha)?.toString('utf8') ?? '';
    const pointers = gitPointers(text, refs);
    if (pointers.length === 0) continue;
    opts.onStep?.(`migrating ${++n}: ${m.path}`);
    // One manifest's payloads in memory at a time, read from the local branch, else its tracking ref.
    const payloads: { path: string; data: Buffer }[] = [];
    const byKey = new Map<string, Buffer>();
    for (const tip of artifactTips) {
      const missing = pointers.filter((p) => !byKey.has(p.key) && safeRelativePath(p.key) === p.key);
      if (missing.length === 0) break;
      const got = await readBlobs(
        repo,
        missing.map((p) => `${tip}:${p.key}`),
      );
      missing.forEach((p) => {
        const data = got.get(`${tip}:${p.key}`);
        if (data) byKey.set(p.key, data);
      });
    }
    for (const p of pointers) {
      const data = byKey.get(p.key);
      const reason = !data
        ? `not on ${config.artifacts_branch} here (fetch it first: git fetch ${target.remote ?? '<remote>'} ${config.artifacts_branch})`
        : sha256Of(data) !== p.sha256 || (p.size !== null && data.length !== p.size)
          ? 'the payload on the artifacts branch does not match its pointer (sha256/size)'
          : null;
      if (reason) result.skipped.push({ path: m.path, payload: p.path, reason });
      else if (!payloads.some((q) => q.path === p.path)) payloads.push({ path: p.path, data: data! });
    }
    if (payloads.length === 0) continue;
    result.manifests.push({ path: m.path, payloads: payloads.length });
    result.payloads += payloads.length;
    if (opts.dryRun) continue;
    const off = await offloadPayloads({ metadata: [{ path: m.path, data: texts.get(m.sha)! }], payloads }, store, [...refs]);
    result.uploaded += off.uploaded;
    result.bytes += off.bytes;
    const next = off.metadata[0]!.data;
    if (!next.equals(texts.get(m.sha)!)) changes.push({ path: m.path, data: next });
  }
  if (opts.dryRun || changes.length === 0) return result;
  const now = opts.now ?? new Date();
  const author = await syncIdent(repo, now);
  const message = `chore(results): payloads of ${changes.length} manifest${changes.length === 1 ? '' : 's'} now in the object store (storage migrate)\n\nThe payloads stay on ${config.artifacts_branch}: older pointers keep working.\n`;
  const { commit } = await writeCommit(repo, { parent: resultsTip, files: changes, message, author });
  assertHeld();
  await updateRefs(repo, [{ ref: resultsRef, new: commit, old: resultsTip }], { message: 'agentv-results: storage migrate' });
  result.commit = commit;
  return result;
}
