/**
 * Push the results and artifacts branches together: atomic (pointers never land without their
 * payloads) and never forced (refspecs without `+`).
 */
import { push, resolveRef, updateRefs, type PushClassification } from '../git/index.js';
import type { PublishTarget } from './target.js';

export interface PushOutcome {
  landed: boolean;
  classification: PushClassification | 'no-remote' | 'nothing-to-push';
  message: string;
  attempts: number;
}

function describe(classification: PushClassification, remote: string, stderr: string): string {
  switch (classification) {
    case 'ok':
      return `pushed to ${remote}`;
    case 'non-fast-forward':
      return `${remote} has results this machine has not merged yet (non-fast-forward)`;
    case 'unreachable':
      return `${remote} is unreachable`;
    case 'auth':
      return `${remote} refused our credentials`;
    default:
      return `push to ${remote} failed: ${stderr.trim().split('\n').pop() ?? 'unknown error'}`;
  }
}

/** One atomic push of both branches. */
export async function pushOnce(target: PublishTarget, opts: { timeoutMs?: number } = {}): Promise<PushOutcome> {
  const remote = target.remote!;
  const refs = [target.artifactsRef, target.resultsRef];
  const present: string[] = [];
  for (const ref of refs) if (await resolveRef(target.repo, ref)) present.push(ref);
  if (present.length === 0) return { landed: true, classification: 'nothing-to-push', message: 'nothing published yet', attempts: 0 };
  const shas = new Map<string, string>();
  for (const ref of present) shas.set(ref, (await resolveRef(target.repo, ref))!);
  const result = await push(target.repo, remote, present.map((ref) => ({ src: shas.get(ref)!, dst: ref })), { atomic: true, timeoutMs: opts.timeoutMs ?? 120_000 });
  if (result.classification === 'ok') await recordRemoteTips(target, remote, shas);
  return { landed: result.classification === 'ok', classification: result.classification, message: describe(result.classification, remote, result.stderr), attempts: 1 };
}

export async function pushBranches(target: PublishTarget): Promise<PushOutcome> {
  return pushOnce(target);
}

/** The remote-tracking ref of one of our branches (refs/remotes/<remote>/agentv/...). */
export function trackingRef(remote: string, ref: string): string {
  return `refs/remotes/${remote}/${ref.slice('refs/heads/'.length)}`;
}

/**
 * After a push lands, record what the remote now has, whatever the remote's fetch refspec says
 * (a bare or oddly configured repository may not map our branches): `status` derives "pending"
 * from these refs alone.
 */
async function recordRemoteTips(target: PublishTarget, remote: string, shas: Map<string, string>): Promise<void> {
  const updates = [];
  for (const [ref, sha] of shas) {
    const tracking = trackingRef(remote, ref);
    const current = await resolveRef(target.repo, tracking);
    if (current !== sha) updates.push({ ref: tracking, new: sha, old: current });
  }
  // Best effort: a concurrent fetch may have moved them already, and it knows better than we do.
  await updateRefs(target.repo, updates).catch(() => {});
}
