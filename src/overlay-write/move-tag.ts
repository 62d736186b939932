/**
 * Move a tag to one run (`gate --update-baseline` moves `baseline`): the run gains the tag, then
 * every other run carrying it loses it — two ordinary tag writes through src/overlay-write/write.ts,
 * never a force, and the order means readers of `@<tag>` always find a run (for a moment two).
 * Only the last write pushes: one push carries every commit.
 */
import { editTags, type OverlayResult, type TagsDoc } from './write.js';
import type { PublishTarget } from '../repo/target.js';
import { listRuns } from '../branch-read/list.js';
import { objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';

export interface MoveTagResult {
  runId: string;
  tag: string;
  /** Runs the tag was removed from. */
  removedFrom: string[];
  /** The last write: its push outcome is the one that carried all of them. */
  last: OverlayResult<TagsDoc>;
}

/** `moveTag`'s options, checked when it is called. */
export const MoveTagOptionsSchema = z.strictObject({
  ...TargetFields,
  /** @internal The package's own modules pass the target they resolved (repo/target.ts). */
  resolved: objectOf<PublishTarget>().optional(),
  /** The published run that gets the tag. */
  runId: z.string(),
  tag: z.string(),
  /** Push the last write (default: results.auto_push). */
  push: z.boolean().optional(),
});

export type MoveTagOptions = z.input<typeof MoveTagOptionsSchema>;

/** Put a tag on one run and take it off every other run (the gate's `baseline`), in one commit. */
export async function moveTag(options: MoveTagOptions): Promise<MoveTagResult> {
  const { runId, tag, push, ...target } = parseOptions('moveTag', MoveTagOptionsSchema, options);
  const holders = (await listRuns({ ...target, tag: [tag] })).runs.map((r) => r.run_id).filter((id) => id !== runId);
  let last = await editTags({ ...target, runId, add: [tag], push: holders.length === 0 ? push : false });
  for (const [i, other] of holders.entries()) {
    last = await editTags({ ...target, runId: other, remove: [tag], push: i === holders.length - 1 ? push : false });
  }
  return { runId, tag, removedFrom: holders, last };
}
