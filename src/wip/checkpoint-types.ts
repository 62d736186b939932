/**
 * What a WIP checkpoint takes and answers (wip/checkpoint.ts), and its error: the options a
 * Checkpointer opens with, the result of one checkpoint, WipError.
 */
import type { Repo } from '../git/index.js';
import type { ObjectStore } from '../store/object-store.js';
import { WipError } from '../errors/wip-errors.js';

export interface CheckpointerOptions {
  repo: Repo;
  /** The run workspace (absolute, or relative to cwd). */
  runDir: string;
  /** Commit identity (the date is taken at each checkpoint). */
  author: { name: string; email: string };
  /** Defaults to wipHost(). */
  host?: string;
  /** Defaults to the recovery marker's run id, else `<parent>/<dir>`. */
  runId?: string;
  /** Branch name without refs/heads/ (defaults to the recovery marker's, else wipBranch(host, runId)). */
  branch?: string;
  now?: () => Date;
  /** storage_mode hybrid: files of the run larger than `heavyBytes` go to this bucket; the branch keeps their pointers. */
  store?: ObjectStore | null;
  heavyBytes?: number;
}

export interface CheckpointResult {
  status: 'created' | 'checkpointed' | 'unchanged';
  runId: string;
  branch: string;
  ref: string;
  /** Tip after the checkpoint (equal to `previous` when unchanged). */
  commit: string;
  previous: string | null;
  /** Sequence number of the tip. */
  checkpoint: number;
  /** Rows captured on the branch in total. */
  rows: number;
  /** Rows this checkpoint added. */
  addedRows: number;
  /** Workspace files written by this checkpoint (index segments and wip.json not counted). */
  files: number;
  /** index.jsonl no longer matched what was captured: it was captured again from the start. */
  rewrote: boolean;
  finished: boolean;
  /**
   * What this checkpoint saw for the first time and did not store because publish would refuse it
   * (runs/read/run-safety.ts): a link, pipe or device in the folder, a row with an unsafe id or path, a
   * result file pointing out of the run. One line each (`file[:line]: why`); wip.json keeps them.
   */
  refused: string[];
}
