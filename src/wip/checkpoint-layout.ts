/**
 * Where WIP checkpoints live and what a checkpoint commit holds (ARCHITECTURE.md, the path of a run).
 *
 * Branch `agentv/wip/<host>/<run-id-slug>`, an orphan history of its own. Each commit's tree:
 *
 *   wip.json                 progress record (schema agentv.wip.v1): run id, host, rows, the byte
 *                            offset of index.jsonl already captured and a hash of the bytes before it
 *   index/<seq>.jsonl        the complete index.jsonl lines that checkpoint <seq> added, verbatim;
 *                            concatenated in name order they are exactly index.jsonl[0, index_bytes)
 *   run/<path>               every other file of the run workspace (sidecars, top-level files)
 *
 * Why segments instead of one index.jsonl blob: a growing index.jsonl rewritten on every checkpoint
 * would make each checkpoint cost O(rows so far) in bytes hashed and compressed. A segment per
 * checkpoint keeps the cost O(rows added), and git only rewrites the small `index/` tree.
 */
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import * as z from 'zod';
import { shortHash } from '../model/path-segments.js';

export const WIP_BRANCH_PREFIX = 'agentv/wip/';
export const WIP_REF_PREFIX = `refs/heads/${WIP_BRANCH_PREFIX}`;
export const WIP_SCHEMA_VERSION = 'agentv.wip.v1';
export const WIP_META_PATH = 'wip.json';
export const WIP_INDEX_DIR = 'index';
export const WIP_RUN_DIR = 'run';
/** storage_mode hybrid: a heavy file of the run is in the bucket; `objects/<rel>` holds its pointer (ref, key, sha256, size). */
export const WIP_OBJECTS_DIR = 'objects';
/**
 * Written by `wip recover` into the workspace it materializes, so an eval resumed there keeps
 * checkpointing onto the branch it came from (a fast-forward of the remote copy). Hidden: the
 * publish and checkpoint walks skip dot-files, so it never reaches a results branch.
 */
export const RECOVERY_MARKER = '.agentv-wip.json';

export const WipMetaSchema = z.looseObject({
  schema_version: z.literal(WIP_SCHEMA_VERSION),
  run_id: z.string().min(1),
  host: z.string().min(1),
  /** The workspace as the checkpointing machine saw it (informative only). */
  run_dir: z.string(),
  /** 1 for the first checkpoint, +1 for every commit. */
  checkpoint: z.number().int().positive(),
  rows: z.number().int().nonnegative(),
  index_bytes: z.number().int().nonnegative(),
  /** sha256 of index.jsonl[max(0, index_bytes - TAIL_BYTES), index_bytes): detects a rewritten index. */
  index_tail_sha256: z.string(),
  /** Newline-terminated lines of index.jsonl read up to index_bytes, refused rows included (line numbers of later refusals). */
  index_lines: z.number().int().nonnegative().optional(),
  /** Lines saying what checkpoints left out because publish would refuse it (runs/read/run-safety.ts), newest last. */
  refused: z.array(z.string()).optional(),
  /** Number of files under index/. */
  segments: z.number().int().nonnegative(),
  /** Top-level files of the workspace (other than index.jsonl) -> blob id, as last checkpointed. */
  top_files: z.record(z.string(), z.string()),
  /** summary.json existed when this checkpoint was taken (the runner had finished). */
  finished: z.boolean(),
  started_at: z.string(),
  updated_at: z.string(),
});
export type WipMeta = z.infer<typeof WipMetaSchema>;

/** How many bytes before the captured offset are hashed to notice an index.jsonl that was rewritten. */
export const TAIL_BYTES = 4096;

export function segmentPath(seq: number): string {
  return `${WIP_INDEX_DIR}/${String(seq).padStart(8, '0')}.jsonl`;
}

/**
 * One ref-name component from free text: letters, digits, ".", "_" and "-" only, never starting
 * with "." or "-", never containing "..", never ending in "." or ".lock" (git check-ref-format).
 * A value that had to change gets a hash suffix, so two different values never share a name.
 */
export function refComponent(value: string, max = 80): string {
  let out = value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/\.{2,}/g, '_')
    .replace(/^[.-]+/, '')
    .replace(/\.+$/, '');
  if (out.endsWith('.lock')) out = `${out.slice(0, -5)}_lock`;
  if (out !== value || out.length > max || out.length === 0) out = `${out.slice(0, max - 9) || 'x'}-${shortHash(value)}`;
  return out;
}

/** The machine name in branch names: AGENTV_RESULTS_HOST (tests, containers) or the hostname. */
export function wipHost(env: NodeJS.ProcessEnv = process.env): string {
  return refComponent((env.AGENTV_RESULTS_HOST || hostname() || 'unknown-host').toLowerCase(), 63);
}

/** `<experiment>/<timestamp>` -> `<experiment>--<timestamp>` (hash-suffixed when ambiguous). */
export function runIdSlug(runId: string): string {
  const plain = runId.split('/').join('--');
  const slug = runId
    .split('/')
    .map((seg) => seg.replace(/[^A-Za-z0-9._-]/g, '_'))
    .join('--');
  const ambiguous = runId.split('/').some((seg) => seg.includes('--'));
  return refComponent(slug !== plain || ambiguous ? `${slug}-${shortHash(runId)}` : slug, 160);
}

/** Branch name (without refs/heads/) of a run's WIP checkpoints on `host`. */
export function wipBranch(host: string, runId: string): string {
  return `${WIP_BRANCH_PREFIX}${refComponent(host, 63)}/${runIdSlug(runId)}`;
}

/** Accepts `agentv/wip/...`, `refs/heads/agentv/wip/...` or `refs/remotes/<r>/agentv/wip/...`; returns the branch name or null. */
export function parseWipBranch(name: string): string | null {
  const m = /^(?:refs\/heads\/|refs\/remotes\/[^/]+\/)?(agentv\/wip\/[^/]+\/[^/]+)$/.exec(name);
  return m ? (m[1] as string) : null;
}

/** Host component of a WIP branch name. */
export function hostOfBranch(branch: string): string {
  return branch.slice(WIP_BRANCH_PREFIX.length).split('/')[0] ?? '';
}

/**
 * The run id a workspace is known by from its first checkpoint on, before any row exists:
 * `<parent dir>/<dir>` — `<experiment>/<timestamp>` for `.agentv/results/<experiment>/<timestamp>/`,
 * the same fallback the run reader and publish use.
 */
export function runIdOfDir(runDir: string): string {
  return `${basename(dirname(runDir))}/${basename(runDir)}`;
}

export function parseWipMeta(data: Buffer | string | null | undefined): WipMeta | null {
  if (data === null || data === undefined) return null;
  try {
    const parsed = WipMetaSchema.safeParse(JSON.parse(data.toString()));
    return parsed.success ? parsed.data : null;
  } catch {
    // unparsable: wip.json that does not parse is no metadata
    return null;
  }
}
