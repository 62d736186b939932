/**
 * The tags and feedback of one run as the run's detail shows them: from the prefetched listing of a
 * kept branch (the static site), else from the branch now, kept per team tip.
 */
import { lsTree, readBlobs, type TreeEntry } from '../git/index.js';
import { overlayDirOf, runLocation, STABLE_RUNS_DIR, stableRunParts } from '../layout/branch-layout.js';
import { overlaysOfText } from '../overlay-write/write.js';
import type { TargetOptions } from '../repo/target.js';
import { teamTip } from '../repo/team-tip.js';
import type { ApiContext } from './api-context.js';

/** The run's tags and feedback: a kept listing (the static site) read the overlays with the run, from the tip that lists it. */
export async function runOverlays(ctx: ApiContext, opts: TargetOptions, id: string) {
  const pre = ctx.runs.fixed ? ctx.cache.prefetchedOverlays(opts, id) : undefined;
  const fromPre = pre && safeOverlays(pre);
  return fromPre ? ([fromPre.tags, fromPre.feedback] as const) : await branchOverlays(ctx, opts, id);
}

/**
 * The run's tags and feedback as the branch has them now: what readTags and readFeedback answer
 * (the run located on each team tip in turn, its overlay files read from the first that holds it),
 * found with one ls-tree and read with one cat-file, and kept per team tip — a commit id names the
 * exact files, and an edit moves the tip — so a run opened again costs one ref read, where each
 * file cost resolving the target and two lookups through the branch's root tree (100,000 entries
 * on a big branch).
 */
async function branchOverlays(ctx: ApiContext, opts: TargetOptions, runId: string) {
  // optional: a run without overlays (or unreadable ones) shows none, as readTags/readFeedback's callers did
  const texts = await overlayTexts(ctx, opts, runId).catch(() => null);
  if (texts === null) return [null, null] as const;
  return [parsedOr(() => overlaysOfText(texts.tags, null).tags), parsedOr(() => overlaysOfText(null, texts.feedback).feedback)] as const;
}

/** `parse()`, or null when the text does not parse (readTags/readFeedback reject then, and the run shows none). */
function parsedOr<T>(parse: () => T): T | null {
  try {
    return parse();
  } catch {
    // unparsable overlay: shown as none, as before
    return null;
  }
}

async function overlayTexts(ctx: ApiContext, opts: TargetOptions, runId: string): Promise<{ tags: string | null; feedback: string | null }> {
  const target = await ctx.runs.target(opts);
  const { tips } = await teamTip(target);
  return ctx.cache.memo(JSON.stringify(['overlays', opts.project ?? '', tips, runId]), async () => {
    // Where readTags/readFeedback look (layout/branch-layout.ts locateRun): the run's root
    // directory, else AgentV 4.42's runs/<exp>/<ts> with its overlays under metadata/.
    let root: string | null = null;
    try {
      root = runLocation(runId).path;
    } catch {
      root = null; // an `<experiment>::<timestamp>` id: only 4.42's layout can hold it
    }
    const parts = stableRunParts(runId);
    const stable = parts ? `${STABLE_RUNS_DIR}/${parts.experiment}/${parts.timestamp}` : null;
    const places = [root, stable].filter((p): p is string => p !== null);
    const files = (dir: string) => ['tags.json', 'feedback.json'].map((f) => `${overlayDirOf(dir)}/${f}`) as [string, string];
    for (const tip of tips) {
      // One ls-tree names the run's places and its overlay files: the root tree is read once.
      const listed = await lsTree(target.repo, tip, { paths: places.flatMap((p) => [p, ...files(p)]) });
      const entries = new Map(listed.map((e) => [e.path, e]));
      // A directory named with a path inside it is listed by its children (ls-tree descends), not itself.
      const dir = places.find((p) => entries.get(p)?.type === 'tree' || listed.some((e) => e.path.startsWith(`${p}/`)));
      if (dir === undefined) continue;
      const [tags, feedback] = files(dir).map((f) => entries.get(f)) as [TreeEntry | undefined, TreeEntry | undefined];
      const blobs = [tags, feedback].filter((e): e is TreeEntry => e?.type === 'blob').map((e) => e.sha);
      const texts = blobs.length > 0 ? await readBlobs(target.repo, blobs) : new Map<string, Buffer | null>();
      const text = (e: TreeEntry | undefined) => (e?.type === 'blob' ? (texts.get(e.sha)?.toString('utf8') ?? null) : null);
      return { tags: text(tags), feedback: text(feedback) };
    }
    return { tags: null, feedback: null };
  });
}

/** Overlays from their texts, or null when one does not parse (the branch is then read, as without them). */
function safeOverlays(pre: { tags: string | null; feedback: string | null }): ReturnType<typeof overlaysOfText> | null {
  try {
    return overlaysOfText(pre.tags, pre.feedback);
  } catch {
    // unparsable: branchOverlays reads it again and answers as readTags/readFeedback do (no overlays shown)
    return null;
  }
}
