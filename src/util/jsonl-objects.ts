/**
 * The one JSONL line reader: a text's non-blank lines, each with its 1-based line number and
 * either its parsed value or why it did not parse. Readers decide what a bad line costs (an issue,
 * a warning, nothing); none splits and parses lines itself.
 */
export type JsonlLine = { line: number; value: unknown; error?: undefined } | { line: number; value?: undefined; error: string };

export function* jsonlLines(text: string): Generator<JsonlLine> {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    try {
      yield { line: i + 1, value: JSON.parse(line) as unknown };
    } catch (err) {
      // Not swallowed: the parse failure is the line's result, for the reader to report.
      yield { line: i + 1, error: (err as Error).message };
    }
  }
}

/**
 * The JSON objects of a JSONL text, leniently: blank lines, lines that do not parse and values
 * that are not objects are skipped (each costs only itself). For readers that take what a run's
 * index holds and leave reporting bad lines to `validate`.
 */
export function jsonlObjects(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const { value } of jsonlLines(text)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(value as Record<string, unknown>);
  }
  return out;
}
