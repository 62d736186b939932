/**
 * The retention log: `.indexes/agentv-results-retention.jsonl` on the live results branch, one
 * line per `expire` that removed runs. It names no run: it records, for every branch that
 * retention changed, the tip just before (where the removed runs still are), so the log grows by
 * one short line per retention, not per run. `pull` of a run that is gone looks for the run's
 * directory at those tips, newest first (one `cat-file` for all of them), and can then say which
 * retention removed it, which commit did, and where history still holds it.
 *
 * The name does not start with `agentv-results.` (our per-day catalog, read by `list`), and AgentV's
 * `.gitattributes` merges every `.indexes/*.jsonl` line by line (`union`), as the sync resolver
 * does for it: two retentions from two machines keep both lines.
 */
import { findDescendantByMessage, readBlobs, readObjects, type Repo } from '../git/index.js';
import { CATALOG_DIR } from './branch-layout.js';

export const RETENTION_LOG_PATH = `${CATALOG_DIR}/agentv-results-retention.jsonl`;
/** Trailer of every commit a retention writes: `AgentV-Retention: <id>` (the id of its log line). */
export const RETENTION_TRAILER = 'AgentV-Retention';

export interface RetentionPolicyRecord {
  keep_days: number | null;
  keep_runs: number | null;
  keep_tags: string[];
}

export interface RetentionTip {
  /** Short branch name, e.g. agentv/results/v1 or agentv/results-archive/v1/2026-03. */
  branch: string;
  /** Its tip just before the retention's commit. */
  tip: string;
}

/** A results branch and its artifacts branch (the live pair, or one archive month's). */
export interface RetentionArea {
  results: RetentionTip | null;
  artifacts: RetentionTip | null;
}

export interface RetentionRecord {
  id: string;
  /** When the retention ran (ISO 8601). */
  at: string;
  policy: RetentionPolicyRecord;
  /** How many runs it removed. */
  removed: number;
  from: RetentionArea[];
}

const tipOf = (v: unknown): RetentionTip | null => {
  const t = v as { branch?: unknown; tip?: unknown } | null;
  return t && typeof t.branch === 'string' && typeof t.tip === 'string' && /^[0-9a-f]{40,64}$/.test(t.tip) ? { branch: t.branch, tip: t.tip } : null;
};

/** The records of a log file; a line we cannot read is skipped (it can only cost its own answer). */
export function parseRetentionLog(text: string): RetentionRecord[] {
  const out: RetentionRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as Record<string, unknown>;
      if (typeof v.id !== 'string' || typeof v.at !== 'string' || !Array.isArray(v.from)) continue;
      const p = (v.policy ?? {}) as Record<string, unknown>;
      out.push({
        id: v.id,
        at: v.at,
        removed: typeof v.removed === 'number' ? v.removed : 0,
        policy: {
          keep_days: typeof p.keep_days === 'number' ? p.keep_days : null,
          keep_runs: typeof p.keep_runs === 'number' ? p.keep_runs : null,
          keep_tags: Array.isArray(p.keep_tags) ? p.keep_tags.filter((t): t is string => typeof t === 'string') : [],
        },
        from: (v.from as unknown[]).map((a) => ({
          results: tipOf((a as Record<string, unknown>)?.results),
          artifacts: tipOf((a as Record<string, unknown>)?.artifacts),
        })),
      });
    } catch {
      // skipped
    }
  }
  return out;
}

export function retentionLogLine(r: RetentionRecord): string {
  return `${JSON.stringify(r)}\n`;
}

export interface RetentionRemoval {
  record: RetentionRecord;
  /** The results branch the run was removed from (live, or its month's archive) and its tip just before. */
  results: RetentionTip;
  /** The artifacts branch of the same area and its tip just before, when that retention changed it. */
  artifacts: RetentionTip | null;
  /** The run's directory on those branches. */
  path: string;
  /** The commit that removed it, when this machine has the branch's history up to that commit. */
  commit: string | null;
}

/** A human phrase for a policy: `keep 365 days, keep the 5000 newest runs, keep tags baseline`. */
export function describePolicy(p: RetentionPolicyRecord): string {
  const parts: string[] = [];
  if (p.keep_days !== null) parts.push(`keep ${p.keep_days} day${p.keep_days === 1 ? '' : 's'}`);
  if (p.keep_runs !== null) parts.push(`keep the ${p.keep_runs} newest runs`);
  if (p.keep_tags.length > 0) parts.push(`keep tag${p.keep_tags.length === 1 ? '' : 's'} ${p.keep_tags.join(', ')}`);
  return parts.join(', ');
}

/**
 * Which retention removed the run whose directory is one of `paths`. Reads the log at each of
 * `logTips` (the live results branch, local and remote-tracking), then looks for the directory at
 * every record's "before" tips in one `cat-file`; the newest record whose tip still had it is the
 * one that removed it. `branchTips(branch)` gives this machine's tips of a branch, to find the
 * removing commit among their history. Null when no retention on record removed it.
 */
export async function findRetentionRemoval(
  repo: Repo,
  logTips: string[],
  paths: string[],
  branchTips: (branch: string) => Promise<string[]>,
): Promise<RetentionRemoval | null> {
  const logs = await readBlobs(
    repo,
    logTips.map((t) => `${t}:${RETENTION_LOG_PATH}`),
  );
  const records = new Map<string, RetentionRecord>();
  for (const data of logs.values()) for (const r of parseRetentionLog(data?.toString('utf8') ?? '')) records.set(r.id, r);
  if (records.size === 0) return null;
  const newestFirst = [...records.values()].sort((a, b) => (a.at === b.at ? 0 : a.at < b.at ? 1 : -1));
  const probes: { record: RetentionRecord; area: RetentionArea; path: string; spec: string }[] = [];
  for (const record of newestFirst)
    for (const area of record.from) if (area.results) for (const path of paths) probes.push({ record, area, path, spec: `${area.results.tip}:${path}` });
  const found = await readObjects(
    repo,
    probes.map((p) => p.spec),
  );
  // The newest record whose "before" tip had the run; when its commit is found, the run must be
  // gone from that commit's tree (else that retention kept it and something later removed it).
  for (const hit of probes.filter((p) => found.get(p.spec)?.type === 'tree')) {
    const results = hit.area.results!;
    let commit: string | null = null;
    for (const tip of await branchTips(results.branch)) {
      // optional: the commit is a detail of the message; the tip is the answer
      commit = await findDescendantByMessage(repo, results.tip, tip, `${RETENTION_TRAILER}: ${hit.record.id}`).catch(() => null);
      if (commit) break;
    }
    if (commit && (await readObjects(repo, [`${commit}:${hit.path}`])).get(`${commit}:${hit.path}`)) continue;
    return { record: hit.record, results, artifacts: hit.area.artifacts, path: hit.path, commit };
  }
  return null;
}
