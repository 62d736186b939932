/**
 * The Dashboard API's answers: one definition of each, imported by the server's answer builders
 * (api.ts, runs-api.ts: each answer is checked against its type with `satisfies`) and by the
 * browser client (serve/client/, compiled by tsconfig.client.json in `npm run typecheck:tests`), so
 * a field renamed on one side fails the build on the other. Only types, and only from modules with
 * no Node imports (the client compiles against the DOM library alone).
 */
import type { ClippedText, ReportDetail, ReportGrader } from '../report/types.js';
import type { AttemptTotals } from '../model/attempt-stats.js';
import type { RunSummaryRow } from '../model/run-row.js';
import type { CompareReportBase } from '../compare/report-types.js';
import type { SkippedSeries, TrendReport, TrendRunPoint, TrendSeries } from '../trend/report-types.js';
import type { FlakyReport } from '../trend/flaky-types.js';
import type { TrajectoryData } from '../autoresearch/trajectory-types.js';

/** One run as the listing shows it (a catalog line, or a run another writer published, with its overlays). */
export interface RunRowAnswer extends RunSummaryRow {
  where: 'local' | 'remote' | 'both';
  writer?: 'agentv-results' | 'agentv';
  tags: string[];
  feedback_notes?: number;
  archived?: string;
}

/** `GET /api/runs`: a page of the listing. */
export interface RunsAnswer {
  branch: string;
  remote: string | null;
  tips: { local: string | null; remote: string | null };
  /** Runs on the branch (before filters). */
  total: number;
  /** Runs matching the filters. */
  matched: number;
  offset: number;
  runs: RunRowAnswer[];
  facets: { experiments: string[]; targets: string[] };
  unreadable: number;
  /** Which tip was read and how fresh the remote side is (`description`: one line for people). */
  read: { branch: string; newest: 'local' | 'remote' | null; description: string };
}

/** One test row of a run. */
export interface RunTestAnswer {
  test_id: string;
  suite: string;
  target: string;
  attempt: number;
  verdict: 'pass' | 'fail' | 'error';
  score: number;
  duration_ms: number | null;
  cost_usd: number | null;
  error?: unknown;
  /** A repeated test's [passed, total] attempts (absent when it ran once). */
  attempts?: [number, number];
}

/** A tags.json as the API answers it. */
export interface TagsAnswer {
  tags: string[];
  updated_at: string | null;
  tag_revision: string;
}

/** One reviewer's note on a test. */
export interface FeedbackEntryAnswer {
  feedback: string;
  reviewer: string;
  updated_at: string;
  revision: string;
  /** The revision this edit replaced (absent on a reviewer's first note on a test). */
  replaces?: string;
}

/** A feedback.json: test id -> reviewer -> note. */
export interface FeedbackAnswer {
  entries: Record<string, Record<string, FeedbackEntryAnswer>>;
  updated_at: string | null;
}

/** `GET /api/runs/:runId`. */
export interface RunDetailAnswer {
  run: Omit<RunRowAnswer, 'tags'> & { tags?: string[] };
  /** The run's figures as `summary` prints them (its keys vary with the run's layout and graders). */
  summary: Record<string, unknown> | null;
  tests: RunTestAnswer[];
  /** A run with repeated attempts: attempts passed/total and the mean attempt success rate, for the run and per target (absent without repeats). */
  attempts?: AttemptTotals & { targets: Record<string, AttemptTotals> };
  problems: unknown[];
  tags: TagsAnswer | null;
  feedback: FeedbackAnswer | null;
  notes: unknown[];
}

/** `GET /api/runs/:runId/tests/:testId`: one test's grading, answer and a page of its transcript. */
export interface TestDetailAnswer {
  run_id: string;
  /** The run's experiment (the test page asks `/api/flaky` of it for the test's history across runs). */
  experiment: string | null;
  test: Omit<RunTestAnswer, 'error'>;
  detail: ReportDetail;
  /** How many texts of the test were clipped to the size cap. */
  truncated: number;
  messages_from: number;
  /** The next page's first message (null: this is the last page). */
  next_message: number | null;
  message_count: number;
  missing: { path: string; key: string; size: number | undefined }[];
  fetched: boolean;
}

/** `POST /api/runs/:runId/tags`. */
export interface TagsWriteAnswer {
  changed: boolean;
  tags: TagsAnswer;
  commit: string | null;
  push: unknown;
}

/** `POST /api/runs/:runId/feedback`. */
export interface FeedbackWriteAnswer {
  changed: boolean;
  reviewer: string;
  entry: FeedbackEntryAnswer | null;
  feedback: FeedbackAnswer;
  commit: string | null;
  push: unknown;
}

/** `GET /api/config`. */
export interface ConfigAnswer {
  read_only: boolean;
  projects: unknown[];
}

/** `GET /api/compare`: compareRuns' report (one definition: compare/report-types.ts), its sides named by run id, not the server's cache path. */
export type CompareAnswer = CompareReportBase;

/** `GET /api/flaky`: the library's FlakyReport (one definition: the CLI's `flaky --json`). */
export type FlakyAnswer = FlakyReport;

/** `GET /api/trend`: the library's TrendReport (one definition) and the filter choices over every run. */
export interface TrendAnswer extends TrendReport {
  experiments: string[];
  targets: string[];
}

/** AgentV's `sync_status` values. */
export type RemoteSyncStatus = 'clean' | 'unavailable' | 'behind' | 'ahead' | 'diverged' | 'needs_human_merge' | 'syncing';

/** An open sync branch as the remote panel lists it. */
export interface SyncBranchAnswer {
  branch: string;
  conflicts: number;
  compare_url: string | null;
  resolve_command: string;
}

/** A WIP branch as the remote panel lists it. */
export interface WipBranchAnswer {
  branch: string;
  rows: number | null;
  where: string;
}

/** Ours beside AgentV's fields: the remote, the daemon's outbox, the last push, sync and WIP branches. */
export interface RemoteExtrasAnswer {
  project: string | null;
  remote: string | null;
  /** The remote's URL with any credentials removed. */
  remote_url: string | null;
  /** The results branch here and on the remote (`missing`: no results branch yet, here or there). */
  results?: { state: string };
  /** Runs/jobs queued by the daemon (or by publishes that could not push) and not yet pushed. */
  outbox: { depth: number; failed: number } | null;
  /** The newest push this server made (null until one lands). */
  last_push: { at: string; results: string | null; artifacts: string | null } | null;
  sync_branches: SyncBranchAnswer[];
  wip: WipBranchAnswer[];
}

/** `GET /api/remote/status` and `POST /api/remote/sync`: AgentV's remote status fields, then ours. */
export interface RemoteStatusAnswer {
  configured: boolean;
  available: boolean;
  repo: string;
  repo_path?: string;
  path?: string;
  auto_push?: boolean;
  require_push?: boolean;
  push_conflict_policy?: 'block';
  local_dir: string;
  last_synced_at?: string;
  last_error?: string;
  sync_status: RemoteSyncStatus;
  branch?: string;
  upstream?: string;
  ahead?: number;
  behind?: number;
  dirty_paths?: string[];
  conflicted_paths?: string[];
  pending_merge?: { temp_branch: string; target_branch: string; compare_url?: string; created_at: string };
  blocked?: boolean;
  block_reason?: string;
  pull_performed?: boolean;
  push_performed?: boolean;
  commit_created?: boolean;
  run_count: number;
  agentv_results?: RemoteExtrasAnswer;
}

/** Any failed request: `error` says why; a missing run's `run_state` says which kind of missing. */
export interface ErrorAnswer {
  error: string;
  run_state?: 'unknown' | 'expired' | 'archived' | 'uncatalogued' | 'not_on_site';
  [field: string]: unknown;
}

export type { ClippedText, ReportDetail, ReportGrader, SkippedSeries, TrendRunPoint, TrendSeries };

/** One experiment with an autoresearch log in the server's directory. */
export interface AutoresearchEntry {
  experiment: string;
  cycles: number;
  best_score: number | null;
  original_score: number | null;
  last_timestamp: string | null;
}

/** `GET /api/autoresearch`: the experiments with a log, by name. */
export interface AutoresearchListAnswer {
  experiments: AutoresearchEntry[];
}

/** `GET /api/autoresearch/:experiment`: its trajectory, the log's cycles as read, and the lines that could not be read. */
export interface AutoresearchAnswer {
  experiment: string;
  trajectory: TrajectoryData;
  /** The log's cycles as `readIterations` read them (the library's `Iteration`). */
  iterations: Record<string, unknown>[];
  warnings: string[];
}
