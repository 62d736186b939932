/**
 * Values that parse but cannot be true: a score outside [0, 1] (AgentV scores are fractions; 42
 * shows up as "Mean score 42.000" and skews every aggregate) and negative durations, tokens or
 * costs. `export` warns about them (the input is what it is), `validate` fails the run.
 */
export function rangeProblems(row: Record<string, unknown>): string[] {
  const out: string[] = [];
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (num(row.score) && (row.score < 0 || row.score > 1)) out.push(`score ${row.score} is outside [0, 1]`);
  if (Array.isArray(row.scores)) {
    row.scores.forEach((s, i) => {
      const v = (s as { score?: unknown } | null)?.score;
      if (num(v) && (v < 0 || v > 1)) out.push(`scores[${i}].score ${v} is outside [0, 1]`);
    });
  }
  for (const key of ['duration_ms', 'total_tokens', 'cost_usd'] as const) {
    const v = row[key];
    if (num(v) && v < 0) out.push(`${key} ${v} is negative`);
  }
  return out;
}
