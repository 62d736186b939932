/**
 * Publish's blobs, written while the run is validated. git's part of a publish (hashing, deflating
 * and packing every file) used to start only once validation, the split and the layout were done;
 * a small machine's second core sat idle meanwhile. Here both branches' fast-import processes start
 * as the run is opened, and the run's files are offered to them as blobs while validation reads
 * the same files (one read each, through the run's walked folder). The commit, under the lock,
 * then names those blobs by mark instead of sending their bytes (git/fast-import.ts).
 *
 * Nothing is decided here: the split, the layout and the commit are publish's as before. A guess
 * only chooses what to offer (a transcript or a file over the threshold to the artifacts stream,
 * any other file to the results one), and a wrong guess costs a blob sent twice, never a wrong
 * tree. The sessions write into object directories of their own, moved into the repository's only
 * with a commit: a publish that stops before committing (an invalid run) leaves nothing behind.
 *
 * Offered only for a run folder of ours read in place (the common case: a run `export` or AgentV's
 * 4.42 pipeline wrote, published as it is) onto a branch with no 4.42 `runs/` tree.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FastImportSession } from '../git/index.js';
import { holdsStableTree } from '../layout/layout-choice.js';
import { trackingRef } from '../repo/tracking-refs.js';
import type { PublishTarget } from '../repo/target.js';
import type { RunHandle } from '../runs/read/run-handle.js';
import { isPayload, publishedFiles } from './split.js';

/** What is offered at one turn of the event loop. */
const TURN_BYTES = 1 << 17;
const NO_TRANSCRIPTS: ReadonlySet<string> = new Set();

export interface Prefeed {
  /** The sessions the commit writes on. */
  sessions: { results: FastImportSession; artifacts: FastImportSession };
  /** Settles once every file is offered (or the offers stopped): the split waits for it, so no file is read twice. */
  fed: Promise<void>;
  /** Stop offering, and end each session no commit was written on. Always called (publish's finally). */
  stop(): Promise<void>;
}

/** Start offering `handle`'s files to git, or null when this run or branch is not one the offers fit. */
export function startPrefeed(target: PublishTarget, handle: RunHandle): Prefeed | null {
  const tree = handle.tree;
  if (handle.dir === null || tree === null || tree.root !== handle.dir || (handle.layout ?? 'bundle') !== 'bundle') return null;
  if (target.config.layout === 'stable') return null;
  // Each in an object directory of its own: a publish refused after the offers leaves nothing behind.
  const results = FastImportSession.start(target.repo, { deltas: false, privateObjects: true });
  let artifacts: FastImportSession;
  try {
    artifacts = FastImportSession.start(target.repo, { privateObjects: true });
  } catch (err) {
    // observed: the failure to start the second is what the caller hears; the first is ended
    void results.close();
    throw err;
  }
  const sessions = { results, artifacts };
  const threshold = target.config.heavy_threshold_bytes;
  let stopped = false;
  const feeding = (async () => {
    // A 4.42 branch (or one that may be): its files are reshaped, so none would be named and git's
    // work would be thrown away.
    // The branch's refs are named, not read first: one object lookup before the lock, which the
    // decision under the lock makes again.
    const branches = [target.resultsRef, ...(target.remote ? [trackingRef(target.remote, target.resultsRef)] : [])];
    if (target.config.layout === 'auto' && (await holdsStableTree(target.repo, branches))) return;
    // A share at each turn of the event loop, which validation also takes (runs/validate.ts): git
    // is handed the first files at once and the rest as it packs them, while validation goes on.
    let turn = 0;
    for (const rel of publishedFiles(tree)) {
      if (stopped) return;
      // The manifest is rewritten with its pointers: never sent as it is.
      if (rel === 'index.jsonl') continue;
      const read = tree.read(rel);
      if (read.kind !== 'ok') continue; // validation reports it
      const payload = isPayload(rel, read.data.length, { transcripts: NO_TRANSCRIPTS, threshold });
      (payload ? sessions.artifacts : sessions.results).offer(read.data);
      turn += read.data.length;
      if (turn >= TURN_BYTES) {
        turn = 0;
        sessions.results.flushOffers();
        sessions.artifacts.flushOffers();
        await nextTurn();
      }
    }
    sessions.results.flushOffers();
    sessions.artifacts.flushOffers();
  })();
  // observed: a failing offer (a git process gone) is the commit's to report, on its session
  const fed = feeding.catch(() => undefined);
  return {
    sessions,
    fed,
    async stop() {
      stopped = true;
      await fed;
      await Promise.all([sessions.results.close(), sessions.artifacts.close()]);
    },
  };
}
