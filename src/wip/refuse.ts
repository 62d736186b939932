/**
 * What a checkpoint leaves out, decided by the one run-safety check (runs/read/run-safety.ts): what
 * publish would refuse, a checkpoint does not store. The checkpoint stays incremental, so the
 * check is asked piece by piece as the checkpoint meets each piece — the new rows (rowSafetyProblems),
 * each file it is about to store (pointerFileProblems), each entry that is not a regular file
 * (irregularEntryMessage, in checkpoint.ts) — never by walking the whole run at every tick.
 */
import { jsonlLines } from '../util/jsonl-objects.js';
import { pointerFileProblems, rowSafetyProblems, type RunSafetyProblem } from '../runs/read/run-safety.js';

export type Refusal = RunSafetyProblem;

export interface SafeRows {
  /** The complete lines to store: every line but the refused rows (the same buffer when none is refused). */
  kept: Buffer;
  /** Non-blank lines kept (as countRows counts them). */
  rows: number;
  /** Newline-terminated lines read (kept or not): where the next delta's line numbers start. */
  lines: number;
  refused: Refusal[];
}

/**
 * The new complete lines of index.jsonl (`complete`, starting after line `linesBefore`) without the
 * rows publish would refuse (an unsafe run id, a path leaving the run). A line that does not parse is
 * kept: it is not a safety matter, and `validate` reports it.
 */
export function refusedRows(complete: Buffer, linesBefore: number): SafeRows {
  const text = complete.toString('utf8');
  const drop = new Set<number>();
  const refused: Refusal[] = [];
  let rows = 0;
  for (const l of jsonlLines(text)) {
    rows++;
    const value = l.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const problems = rowSafetyProblems(value as Record<string, unknown>, linesBefore + l.line);
    if (problems.length === 0) continue;
    drop.add(l.line);
    refused.push(...problems.map((p) => ({ ...p, message: `${p.message} — the row is not checkpointed` })));
  }
  const lines = text.length === 0 ? 0 : text.split('\n').length - 1;
  if (drop.size === 0) return { kept: complete, rows, lines, refused };
  const kept = text
    .split('\n')
    .slice(0, lines)
    .filter((_, i) => !drop.has(i + 1))
    .map((line) => `${line}\n`)
    .join('');
  return { kept: Buffer.from(kept, 'utf8'), rows: rows - drop.size, lines, refused };
}

/** Why a file of the run may not be stored as it is (a result file pointing out of the run); empty when it may. */
export function unsafeFileProblems(rel: string, data: Buffer): Refusal[] {
  return pointerFileProblems(rel, { kind: 'ok', data }).map((p) => ({ ...p, message: `${p.message} — the file is not checkpointed` }));
}
