/**
 * `tag` and `feedback`: edit the mutable overlays of a published run (`tags.json`,
 * `feedback.json`) directly on the results branch, then push with the normal protocol. Two people
 * tagging or reviewing the same run from different machines merge (json-union); only the same value
 * changed two ways is set aside on a sync branch.
 *
 *   fetch + integrate (best effort: offline edits stay local and pending)
 *   lock -> read the overlay at the branch tip -> apply the edit -> one commit -> CAS -> unlock
 *   push (push-branches.ts)
 *
 * `tag_revision` is recomputed on every edit (computeTagRevision); readers compare it to notice
 * that tags changed, and `expectRevision` turns it into an optimistic-concurrency check.
 */
import { userInfo } from 'node:os';
import { configGet, readBlobs, updateRefs, writeCommit, type FileChange } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import {
  computeFeedbackRevision,
  computeTagRevision,
  feedbackNotes,
  MAX_TAGS,
  normalizeFeedbackEntries,
  validateTags,
  type FeedbackDocument,
  type FeedbackEntry,
  type FeedbackNote,
} from '../merge/index.js';
import { fetchBranches, integrateRemote, syncIdent } from '../sync/integrate.js';
import { gitattributesUpdate, isStableRunPath, locateRun, overlayDirOf, presumedRunLocation, type RunLocation } from '../layout/branch-layout.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { pushBranches, type PushBranchesOptions, type PushOutcome } from '../sync/push-branches.js';
import { resolveTarget, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { flag, fnOf, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { adoptTeamTips, teamTip } from '../repo/team-tip.js';
import { branchRefs, fetchBranches as fetchForRead } from '../repo/remote-view.js';
import type { TagsDocument } from '../model/artifacts.js';
import { OverlayInputError, TagRevisionMismatch, FeedbackRevisionMismatch } from '../errors/overlay-errors.js';

export const MAX_FEEDBACK_CHARS = 20_000;

/** The target fields of an overlay verb, and the target already resolved by a reader that asks many questions of one repository (internal). */
const OverlayTargetFields = {
  ...TargetFields,
  /** @internal The package's own modules pass the target they resolved (repo/target.ts). */
  resolved: objectOf<PublishTarget>().optional(),
  /** The published run. */
  runId: z.string(),
};

/** What every overlay edit takes: the run, whether to push, a clock, the push loop's options. */
const OverlayEditFields = {
  ...OverlayTargetFields,
  /** Push after committing (default true when there is a remote). */
  push: z.boolean().default(true).meta(flag('--no-push', 'Commit locally only (a later publish or `sync` pushes it)')),
  now: fnOf<() => Date>().default(() => () => new Date()),
  pushOptions: objectOf<PushBranchesOptions>().optional(),
};

/** An overlay edit's options as parsed at its verb's door. */
type OverlayOptions = z.output<z.ZodObject<typeof OverlayEditFields>>;

export interface OverlayResult<D> {
  runId: string;
  path: string;
  changed: boolean;
  document: D;
  commit: string | null;
  push: PushOutcome | null;
}

/** `tags.json` as read and written: the model's TagsDocument (one definition), under the name the API has always used. */
export type TagsDoc = TagsDocument;

/** `feedback.json` as read and written: overlays/document.ts's FeedbackDocument (one definition), under the name the API has always used. */
export type FeedbackDoc = FeedbackDocument;

interface EditContext {
  loc: RunLocation;
  /** The overlay's current text, or null when the run has none yet. */
  current: string | null;
  /** The run's index.jsonl on the branch. */
  index: string;
  now: Date;
}

/** Edit one overlay file of one run; `edit` returns the new document, or null for "no change". */
async function editOverlay<D>(
  opts: OverlayOptions,
  file: 'tags.json' | 'feedback.json',
  edit: (ctx: EditContext) => D | null,
  reread: (text: string | null) => D,
): Promise<OverlayResult<D>> {
  const target = await resolveTarget(opts);
  const wantPush = opts.push && target.remote !== null;
  if (wantPush) await catchUp(target, opts);
  let loc = presumedRunLocation(opts.runId);
  let path = `${loc.path}/${file}`;
  const now = opts.now();

  const lock = await acquirePublishLock(target.repo.commonDir);
  let commit: string | null = null;
  let document: D;
  try {
    // Edit the tip the push goes onto: a fresh clone's remote-tracking branch, not nothing.
    const tip = (await adoptTeamTips(target, () => lock.assertHeld())).results;
    if (tip === null)
      throw new OverlayInputError(`nothing is published in ${target.repo.workTree ?? target.repo.gitDir} yet (branch ${target.config.branch} does not exist)`, {
        notFound: true,
      });
    // A run of AgentV 4.42 (`<experiment>::<timestamp>`) lives under runs/, its overlays under metadata/runs/.
    loc = (await locateRun(target.repo, tip, opts.runId)) ?? loc;
    const stable = isStableRunPath(loc.path);
    path = `${overlayDirOf(loc.path)}/${file}`;
    // AgentV 5 runs keep their manifest in .internal/; ours at the run's root.
    const specs = [`${tip}:${loc.path}/index.jsonl`, `${tip}:${path}`, `${tip}:.gitattributes`, `${tip}:${loc.path}/.internal/index.jsonl`];
    const blobs = await readBlobs(target.repo, specs);
    const index = blobs.get(specs[0]!) ?? blobs.get(specs[3]!);
    if (!index) throw new OverlayInputError(`run ${opts.runId} is not on ${target.config.branch} (looked for ${loc.path}/index.jsonl)`, { notFound: true });
    const current = blobs.get(specs[1]!)?.toString('utf8') ?? null;
    const next = edit({ loc, current, index: index.toString('utf8'), now });
    if (next === null) {
      document = reread(current);
    } else {
      document = next;
      const changes: FileChange[] = [{ path, data: `${JSON.stringify(next, null, 2)}\n` }];
      // The branch keeps its .gitattributes, so people merging it by hand get the drivers.
      // (Not on a run of AgentV 4.42: its branch carries no .gitattributes of its own.)
      const attributes = stable ? null : gitattributesUpdate(blobs.get(specs[2]!)?.toString('utf8') ?? null);
      if (attributes !== null) changes.push({ path: '.gitattributes', data: attributes });
      const author = await syncIdent(target.repo, now);
      const what = file === 'tags.json' ? 'tags' : 'feedback';
      const written = await writeCommit(target.repo, {
        parent: tip,
        files: changes,
        message: `agentv: ${what} of ${opts.runId}\n\nAgentV-Run: ${loc.path}\n`,
        author,
      });
      lock.assertHeld();
      await updateRefs(target.repo, [{ ref: target.resultsRef, new: written.commit, old: tip }], { message: `agentv-results: ${what} ${opts.runId}` });
      commit = written.commit;
    }
  } finally {
    await lock.release();
  }
  const push = wantPush && commit !== null ? await pushBranches(target, opts.pushOptions) : null;
  return { runId: opts.runId, path, changed: commit !== null, document, commit, push };
}

/** Edit on top of what the remote has (the run may have been published elsewhere). Offline is fine. */
async function catchUp(target: PublishTarget, opts: OverlayOptions): Promise<void> {
  try {
    const remote = await fetchBranches(target, { timeoutMs: opts.pushOptions?.timeoutMs ?? 60_000 });
    // A conflict with unpushed local work is left for the push loop to set aside.
    await integrateRemote(target, remote, { now: opts.now });
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
  }
}

function parseDoc(text: string | null, file: string): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const doc: unknown = JSON.parse(text);
    if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new OverlayInputError(`${file} on the results branch is not a JSON object (a conflicted hand merge?); fix it there first`);
}

function tagsOf(text: string | null): TagsDoc {
  const doc = parseDoc(text, 'tags.json');
  if (doc === null) {
    const empty = { tags: [] as string[], updated_at: null };
    return { ...empty, tag_revision: computeTagRevision(empty) };
  }
  return {
    ...doc,
    tags: Array.isArray(doc.tags) ? (doc.tags as string[]) : [],
    updated_at: (doc.updated_at as string | null) ?? null,
    tag_revision: (doc.tag_revision as string) ?? computeTagRevision(doc),
  };
}

/** `editTags`' options (the `tag` command's flags come from the same fields). */
export const EditTagsOptionsSchema = z.strictObject({
  ...OverlayEditFields,
  /** Tags to add. */
  add: z.array(z.string()).default([]),
  /** Tags to remove. */
  remove: z.array(z.string()).default([]),
  /** Fail (TagRevisionMismatch) unless the current tag_revision is this. */
  expectRevision: z.string().optional().meta(flag('--expect-revision <rev>', 'Only edit if tag_revision is still this (optimistic concurrency)')),
});
export type TagOptions = z.input<typeof EditTagsOptionsSchema>;

/** Add or remove a run's tags (`tags.json` on the results branch), pushing when asked. */
export async function editTags(options: TagOptions): Promise<OverlayResult<TagsDoc>> {
  const opts = parseOptions('editTags', EditTagsOptionsSchema, options);
  const add = opts.add;
  const remove = new Set(opts.remove);
  const check = validateTags([...new Set(add)]);
  if (!check.ok) throw new OverlayInputError(check.errors.join('; '));
  for (const t of add) if (remove.has(t)) throw new OverlayInputError(`tag ${JSON.stringify(t)} is both added and removed`);
  return editOverlay(
    opts,
    'tags.json',
    ({ current, now }) => {
      const doc = tagsOf(current);
      // With no tags.json yet, the revision readTags reports (that of the empty document) matches too.
      if (opts.expectRevision !== undefined && opts.expectRevision !== doc.tag_revision)
        throw new TagRevisionMismatch(opts.expectRevision, current === null ? null : doc.tag_revision);
      const tags = doc.tags.filter((t) => !remove.has(t));
      for (const t of add) if (!tags.includes(t)) tags.push(t);
      if (current !== null && tags.length === doc.tags.length && tags.every((t, i) => t === doc.tags[i])) return null;
      const result = validateTags(tags);
      if (!result.ok) throw new OverlayInputError(`${result.errors.join('; ')} (a run has at most ${MAX_TAGS} tags)`);
      const { tag_revision: _old, ...rest } = doc;
      const next = { ...rest, tags, updated_at: now.toISOString() };
      return { ...next, tag_revision: computeTagRevision(next) };
    },
    tagsOf,
  );
}

/** `readTags`' options; `fetch`: refresh the results branch's remote-tracking ref first, as `list --fetch` does. */
export const ReadTagsOptionsSchema = z.strictObject({
  ...OverlayTargetFields,
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Showing the tags: fetch the results branch from the remote first')),
});
export type OverlayReadOptions = z.input<typeof ReadTagsOptionsSchema>;

/** A run's tags as the results branch has them (no lock; `fetch` refreshes first). */
export async function readTags(options: OverlayReadOptions): Promise<TagsDoc> {
  const opts = parseOptions('readTags', ReadTagsOptionsSchema, options);
  return tagsOf(await readOverlayText(await readTarget(opts), opts.runId, 'tags.json'));
}

/** The target of an overlay read, its results branch fetched first when asked. */
async function readTarget(opts: z.output<typeof ReadTagsOptionsSchema>): Promise<PublishTarget> {
  const target = await resolveTarget(opts);
  if (opts.fetch) await fetchForRead(target, [branchRefs(target, 'results')]);
  return target;
}

/** `setFeedback`'s options (the `feedback` command's flags come from the same fields). */
export const SetFeedbackOptionsSchema = z.strictObject({
  ...OverlayEditFields,
  /** The test the note is on. */
  testId: z.string(),
  /** The note. */
  text: z.string(),
  /** Defaults to git's user.name, then the OS user. */
  reviewer: z.string().optional().meta(flag('--reviewer <name>', 'Reviewer name (default: git user.name). Each reviewer has their own note per test')),
  /**
   * Fail (FeedbackRevisionMismatch) unless this reviewer's entry on the test still has this
   * revision; `''` means "only if this reviewer has no entry yet".
   */
  expectRevision: z
    .string()
    .optional()
    .meta(flag('--expect-revision <rev>', "Only save if your note's revision is still this ('' = only if you have none yet)")),
});
export type FeedbackOptions = z.input<typeof SetFeedbackOptionsSchema>;

function testIdsOf(index: string): Set<string> {
  const ids = new Set<string>();
  for (const line of index.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const id = (JSON.parse(line) as { test_id?: unknown }).test_id;
      if (typeof id === 'string') ids.add(id);
    } catch {
      // not a row we can read; the run's own validation reports it
    }
  }
  return ids;
}

function feedbackOf(text: string | null): FeedbackDoc {
  const doc = parseDoc(text, 'feedback.json');
  if (doc === null) return { entries: Object.create(null) as FeedbackDoc['entries'], updated_at: null };
  return { ...doc, entries: normalizeFeedbackEntries(doc.entries), updated_at: (doc.updated_at as string | null) ?? null };
}

/**
 * Leave (or replace) one reviewer's note on one test. Notes of other reviewers, on the same test or
 * others, are untouched: entries are keyed by (test, reviewer), so they also merge cleanly when two
 * machines write at once.
 */
export async function setFeedback(options: FeedbackOptions): Promise<OverlayResult<FeedbackDoc> & { reviewer: string; entry: FeedbackEntry | null }> {
  const opts = parseOptions('setFeedback', SetFeedbackOptionsSchema, options);
  const text = opts.text.trim();
  if (text === '') throw new OverlayInputError('feedback text is empty');
  if (text.length > MAX_FEEDBACK_CHARS) throw new OverlayInputError(`feedback is ${text.length} characters; at most ${MAX_FEEDBACK_CHARS} are allowed`);
  const reviewer = (opts.reviewer ?? (await defaultReviewer(opts))).trim();
  if (reviewer === '' || /\p{Cc}/u.test(reviewer)) throw new OverlayInputError('--reviewer must be a non-empty single-line name');
  const result = await editOverlay(
    opts,
    'feedback.json',
    ({ current, index, now }) => {
      const ids = testIdsOf(index);
      if (!ids.has(opts.testId)) {
        const some = [...ids].slice(0, 5).join(', ');
        throw new OverlayInputError(`run ${opts.runId} has no test ${JSON.stringify(opts.testId)}${some ? ` (tests include ${some})` : ''}`, {
          notFound: true,
        });
      }
      const doc = feedbackOf(current);
      const mine = Object.hasOwn(doc.entries, opts.testId) ? doc.entries[opts.testId]! : undefined;
      const old = mine && Object.hasOwn(mine, reviewer) ? mine[reviewer] : undefined;
      if (opts.expectRevision !== undefined && opts.expectRevision !== (old?.revision ?? '')) {
        throw new FeedbackRevisionMismatch(opts.testId, reviewer, opts.expectRevision, old?.revision ?? null);
      }
      if (old && old.feedback === text) return null;
      const stamp = now.toISOString();
      const entry: FeedbackEntry = {
        ...(old ?? {}),
        feedback: text,
        reviewer,
        updated_at: stamp,
        revision: computeFeedbackRevision(opts.testId, reviewer, text, stamp),
      };
      if (old) entry.replaces = old.revision;
      else delete entry.replaces;
      // Rebuilt without prototypes so a test id or reviewer like "__proto__" stays plain data.
      const entries = Object.assign(Object.create(null) as FeedbackDoc['entries'], doc.entries);
      entries[opts.testId] = Object.assign(Object.create(null) as Record<string, FeedbackEntry>, mine ?? {}, { [reviewer]: entry });
      return { ...doc, entries, updated_at: stamp };
    },
    feedbackOf,
  );
  const mine = result.document.entries[opts.testId];
  return { ...result, reviewer, entry: mine && Object.hasOwn(mine, reviewer) ? mine[reviewer]! : null };
}

/** `readFeedback`'s options: a run's notes, or one test's. */
export const ReadFeedbackOptionsSchema = z.strictObject({
  ...ReadTagsOptionsSchema.shape,
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Showing notes: fetch the results branch from the remote first')),
  /** Only the notes on this test. */
  testId: z.string().optional(),
});
export type ReadFeedbackOptions = z.input<typeof ReadFeedbackOptionsSchema>;

/** The feedback of a run (optionally one test) as the results branch has it (no network, no lock). */
export async function readFeedback(options: ReadFeedbackOptions): Promise<{ runId: string; notes: FeedbackNote[]; document: FeedbackDoc }> {
  const opts = parseOptions('readFeedback', ReadFeedbackOptionsSchema, options);
  const document = feedbackOf(await readOverlayText(await readTarget(opts), opts.runId, 'feedback.json'));
  return { runId: opts.runId, notes: feedbackNotes(document, opts.testId), document };
}

/** A run's tags and feedback from its tags.json and feedback.json texts (null: none), as readTags and readFeedback answer. */
export function overlaysOfText(tags: string | null, feedback: string | null): { tags: TagsDoc; feedback: { notes: FeedbackNote[]; document: FeedbackDoc } } {
  const document = feedbackOf(feedback);
  return { tags: tagsOf(tags), feedback: { notes: feedbackNotes(document), document } };
}

/**
 * An overlay file of a run as the team's branch has it (repo/team-tip.ts: the newer
 * of the local branch and the remote-tracking ref; when they diverged, the first that holds the
 * run). Its directory: AgentV 4.42's runs keep theirs under metadata/runs/.
 */
async function readOverlayText(target: PublishTarget, runId: string, file: 'tags.json' | 'feedback.json'): Promise<string | null> {
  for (const tip of (await teamTip(target)).tips) {
    const loc = await locateRun(target.repo, tip, runId);
    if (loc === null) continue;
    const spec = `${tip}:${overlayDirOf(loc.path)}/${file}`;
    return (await readBlobs(target.repo, [spec])).get(spec)?.toString('utf8') ?? null;
  }
  return null;
}

async function defaultReviewer(opts: TargetOptions): Promise<string> {
  const target = await resolveTarget(opts);
  const name = await configGet(target.repo, 'user.name');
  if (name) return name;
  try {
    return userInfo().username;
  } catch {
    // fallback: no OS user name (a container) leaves "unknown"
    return 'unknown';
  }
}
