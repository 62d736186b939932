/**
 * A repeated test's attempts as the commands show them: AgentV's strategy, the attempt statistics
 * (model/attempt-stats.ts) and each attempt's verdict, score, answer and transcript, read from the
 * attempt's own `sample-K/` folder under the row's directory. `show`, the report and the
 * Dashboard's test view (and so the site) all take them from here.
 */
import type { IndexRow } from '../model/artifacts.js';
import { attemptList, attemptsOf, hasRepeats, type AttemptVerdict } from '../model/attempts.js';
import { attemptStats, type AttemptStats } from '../model/attempt-stats.js';
import { checkRunPathSync, safeRelativePath } from './read/run-files.js';
import { readRunRelText, type LoadedRun } from './read/run-reader.js';

/** An answer longer than this is cut (with a note) in what the commands print; the file keeps it whole. */
export const ATTEMPT_ANSWER_LIMIT = 20_000;

export interface AttemptDetail {
  /** 0-based. */
  index: number;
  verdict: AttemptVerdict;
  score: number | null;
  execution_status: string | null;
  error: string | null;
  /** The attempt's answer (`outputs/answer.md`), cut at ATTEMPT_ANSWER_LIMIT characters; null when it has none. */
  answer: string | null;
  /** Its transcript's path relative to the run directory, when the run holds one. */
  transcript: string | null;
}

export interface AttemptsDetail extends AttemptStats {
  /** AgentV's aggregation strategy (null when the run did not name one). */
  strategy: string | null;
  list: AttemptDetail[];
}

function cut(text: string): string {
  return text.length > ATTEMPT_ANSWER_LIMIT
    ? `${text.slice(0, ATTEMPT_ANSWER_LIMIT)}\n… (${text.length - ATTEMPT_ANSWER_LIMIT} more characters in the file)`
    : text;
}

/** The attempts of a repeated row; null when the test ran once. `run` null: no files read (answers and transcripts null). */
export function attemptsDetail(run: LoadedRun | null, row: IndexRow): AttemptsDetail | null {
  const raw = row as unknown as Record<string, unknown>;
  const a = attemptsOf(raw);
  if (!hasRepeats(a)) return null;
  const items = attemptList(raw) ?? [];
  const list = a.attempts.map((at, i): AttemptDetail => {
    const item = items[i] as Record<string, unknown> | undefined;
    const sample = typeof item?.sample_path === 'string' ? item.sample_path : null;
    const folder = sample !== null ? safeRelativePath(`${row.result_dir}/${sample}`) : null;
    const transcript = folder !== null ? `${folder}/transcript.json` : null;
    const answer = run !== null && folder !== null ? readRunRelText(run, `${folder}/outputs/answer.md`) : null;
    const hasTranscript = run?.dir != null && transcript !== null && checkRunPathSync(run.dir, transcript).kind === 'ok';
    return {
      index: at.index,
      verdict: at.verdict,
      score: at.score,
      execution_status: at.execution_status,
      error: at.error,
      answer: answer === null ? null : cut(answer),
      transcript: hasTranscript ? transcript : null,
    };
  });
  return { strategy: a.strategy, ...attemptStats(a.passed, a.total), list };
}
