/**
 * The write routes: `POST /runs/:runId/tags` and `POST /runs/:runId/feedback`, each with the revision
 * the page read, so a concurrent edit is refused (409), never overwritten.
 */
import { HttpError } from '../errors/serve-errors.js';
import { editTags, setFeedback } from '../overlay-write/write.js';
import type { TargetOptions } from '../repo/target.js';
import { jsonKeys } from '../util/json-keys.js';
import type { ApiContext } from './api-context.js';
import type { Reply, Request } from './http.js';
import type { FeedbackWriteAnswer, TagsWriteAnswer } from './api-types.js';

function stringList(v: unknown, name: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new HttpError(400, `${name}: expected a list of strings`);
  return v as string[];
}

export async function postTags(_ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const body = await req.body();
  const expect = body.expect_revision;
  if (typeof expect !== 'string' || expect === '')
    throw new HttpError(428, 'expect_revision is required: send the tag_revision you read (GET the run first), so a concurrent edit is not overwritten');
  const res = await editTags({
    ...opts,
    runId: req.params.runId!,
    add: stringList(body.add, 'add'),
    remove: stringList(body.remove, 'remove'),
    expectRevision: expect,
  });
  return { json: { changed: res.changed, tags: res.document, commit: res.commit, push: jsonKeys(res.push) } satisfies TagsWriteAnswer };
}

export async function postFeedback(_ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const body = await req.body();
  if (typeof body.expect_revision !== 'string') {
    throw new HttpError(
      428,
      'expect_revision is required: send the revision of this reviewer\'s current note on the test ("" when there is none), so a concurrent edit is not overwritten',
    );
  }
  if (typeof body.test_id !== 'string' || typeof body.text !== 'string') throw new HttpError(400, 'feedback needs test_id and text (strings)');
  if (body.reviewer !== undefined && typeof body.reviewer !== 'string') throw new HttpError(400, 'reviewer: expected a string');
  const res = await setFeedback({
    ...opts,
    runId: req.params.runId!,
    testId: body.test_id,
    text: body.text,
    reviewer: body.reviewer as string | undefined,
    expectRevision: body.expect_revision,
  });
  return {
    json: {
      changed: res.changed,
      reviewer: res.reviewer,
      entry: res.entry,
      feedback: res.document,
      commit: res.commit,
      push: jsonKeys(res.push),
    } satisfies FeedbackWriteAnswer,
  };
}
